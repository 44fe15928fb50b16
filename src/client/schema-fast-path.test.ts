import assert from "node:assert/strict";
import { test } from "node:test";
import { Validator } from "@cfworker/json-schema";
import fc from "fast-check";
import type { JsonObject, JsonValue } from "../jsonrpc/messages.ts";
import { quickCheckOf } from "./schema-fast-path.ts";

const TYPES = ["object", "array", "string", "number", "integer", "boolean", "null"] as const;
const scalarArb = fc.oneof(
  fc.constantFrom<JsonValue>(null, true, false, 0, -0, 1, 1.5, -3, 2 ** 53, "", "a", "b", "1"),
  fc.string({ maxLength: 3 }),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);
const keyArb = fc.constantFrom("a", "b", "c", "__proto__", "constructor", "0");

/** Schemas from the plain subset (and a few keywords outside it, which must disable the quick path). */
const schemaArb: fc.Arbitrary<JsonObject> = fc.letrec<{ schema: JsonObject }>((tie) => ({
  schema: fc.oneof(
    { maxDepth: 3, depthSize: "small" },
    fc.record({ type: fc.constantFrom(...TYPES) }),
    fc
      .record(
        {
          type: fc.oneof(
            fc.constantFrom(...TYPES),
            fc.uniqueArray(fc.constantFrom(...TYPES), { minLength: 1, maxLength: 3 }),
          ),
          properties: fc.dictionary(keyArb, tie("schema"), { maxKeys: 3 }),
          required: fc.uniqueArray(keyArb, { maxLength: 3 }),
          additionalProperties: fc.oneof(fc.boolean(), tie("schema")),
          items: tie("schema"),
          enum: fc.array(scalarArb, { minLength: 1, maxLength: 4 }),
          const: scalarArb,
          description: fc.string({ maxLength: 4 }),
          minimum: fc.integer(),
          format: fc.constant("email"),
        },
        { requiredKeys: [] },
      )
      .map((s) => s as JsonObject),
  ),
})).schema;

const valueArb: fc.Arbitrary<JsonValue> = fc.letrec<{ value: JsonValue }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    scalarArb,
    fc.array(tie("value"), { maxLength: 3 }),
    fc.dictionary(keyArb, tie("value"), { maxKeys: 3 }) as fc.Arbitrary<JsonValue>,
  ),
})).value;

test("a quick 'valid' is never a value the full validator rejects", () => {
  fc.assert(
    fc.property(schemaArb, fc.array(valueArb, { minLength: 1, maxLength: 6 }), (schema, values) => {
      const quick = quickCheckOf(schema);
      if (!quick) return;
      const full = new Validator(structuredClone(schema) as never, "2020-12", false);
      for (const raw of values) {
        // Values reach the validator as JSON.parse makes them (own __proto__ keys included).
        const value = JSON.parse(JSON.stringify(raw));
        if (quick(value)) assert.equal(full.validate(value).valid, true, JSON.stringify({ schema, value }));
      }
    }),
    { numRuns: 1500 },
  );
});

test("plain output schemas get a quick check; any other keyword, or a boolean schema outside additionalProperties, gets none", () => {
  assert.ok(quickCheckOf({ type: "object", properties: { a: { type: "string" } }, required: ["a"] }));
  assert.ok(quickCheckOf({ type: "object", additionalProperties: false, description: "x" }));
  assert.equal(quickCheckOf({ type: "string", format: "email" }), undefined);
  assert.equal(quickCheckOf({ $ref: "#/$defs/a", $defs: { a: {} } }), undefined);
  assert.equal(quickCheckOf({ type: "object", properties: { a: true } }), undefined);
  assert.equal(quickCheckOf({ items: [{ type: "string" }] }), undefined);
  assert.equal(quickCheckOf({ enum: [{ a: 1 }] }), undefined);
});
