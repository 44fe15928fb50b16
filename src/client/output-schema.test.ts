import assert from "node:assert/strict";
import { test } from "node:test";
import { TetherError } from "../errors/tether-error.ts";
import { defaultValidator, draftOf, outputValidationOf } from "./output-schema.ts";

const WEATHER = {
  type: "object",
  properties: { temperature: { type: "number" }, conditions: { type: "string" } },
  required: ["temperature", "conditions"],
};

test("M3: the default validator accepts a matching value and names where a mismatch is, not what it holds", async () => {
  const validate = await defaultValidator();
  assert.deepEqual(validate(WEATHER, { temperature: 3, conditions: "rain" }), { valid: true });
  const verdict = validate(WEATHER, { temperature: "secret-value", conditions: "rain" });
  assert.equal(verdict.valid, false);
  assert.ok(verdict.errors && verdict.errors.length > 0);
  assert.ok(!verdict.errors.join(" ").includes("secret-value"));
});

test("M3: drafts 2020-12 (the default) and 07 are told apart by $schema", async () => {
  assert.equal(draftOf({}), "2020-12");
  assert.equal(draftOf({ $schema: "http://json-schema.org/draft-07/schema#" }), "7");
  assert.equal(draftOf({ $schema: "https://json-schema.org/draft/2020-12/schema" }), "2020-12");
  const validate = await defaultValidator();
  const modern = {
    $defs: { n: { type: "number" } },
    type: "array",
    prefixItems: [{ $ref: "#/$defs/n" }],
  };
  assert.equal(validate(modern, [1]).valid, true);
  assert.equal(validate(modern, ["x"]).valid, false);
  const draft7 = {
    $schema: "http://json-schema.org/draft-07/schema#",
    definitions: { n: { type: "number" } },
    type: "object",
    properties: { a: { $ref: "#/definitions/n" } },
    dependencies: { a: ["b"] },
  };
  assert.equal(validate(draft7, { a: 1, b: 2 }).valid, true);
  assert.equal(validate(draft7, { a: "x", b: 2 }).valid, false);
  assert.equal(validate(draft7, { a: 1 }).valid, false);
});

test("M3: a schema is compiled once and never changed by validation", async () => {
  const validate = await defaultValidator();
  const schema = structuredClone(WEATHER);
  validate(schema, { temperature: 1, conditions: "x" });
  validate(schema, {});
  assert.deepEqual(schema, WEATHER);
});

test("P2: validateOutput must be a function or false", () => {
  assert.equal(outputValidationOf(undefined), undefined);
  assert.equal(outputValidationOf(false), false);
  assert.equal(typeof outputValidationOf(() => ({ valid: true })), "function");
  for (const bad of [true, "ajv", {}, 0]) {
    assert.throws(
      () => outputValidationOf(bad),
      (e: unknown) => e instanceof TetherError && e.code === "config" && /validateOutput/.test(e.message),
    );
  }
});
