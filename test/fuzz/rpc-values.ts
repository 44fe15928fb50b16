// Arbitraries for JSON-RPC traffic, valid and not: ids of every type, messages with fields of the
// wrong type, batches, and hand-written JSON texts (huge numbers, deep nesting) that
// JSON.stringify would never produce.

import fc from "fast-check";

/** Values a JSON-RPC id field might hold, legal or not. */
export const anyId: fc.Arbitrary<unknown> = fc.oneof(
  fc.integer(),
  fc.constantFrom(0, -1, Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER + 1, 2 ** 63, -(2 ** 60), 1.5, -0),
  fc.double(),
  fc.string({ maxLength: 6 }),
  fc.constantFrom("", "1", "__proto__", "constructor"),
  fc.constant(null),
  fc.boolean(),
  fc.constant([]),
  fc.constant({}),
  fc.constant([1]),
);

const anyValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 1, arbitrary: fc.constantFrom(undefined, [], {}, "", 0, null, true) },
);

/** Something in the shape of a JSON-RPC message, with each field right, wrong or missing. */
export const messageLike: fc.Arbitrary<Record<string, unknown>> = fc.record(
  {
    jsonrpc: fc.oneof({ weight: 5, arbitrary: fc.constant("2.0") }, { weight: 1, arbitrary: anyValue }),
    id: anyId,
    method: fc.oneof(
      { weight: 3, arbitrary: fc.constantFrom("ping", "tools/list", "notifications/message", "") },
      { weight: 1, arbitrary: anyValue },
    ),
    params: fc.oneof(
      { weight: 3, arbitrary: fc.dictionary(fc.string({ maxLength: 4 }), fc.jsonValue({ maxDepth: 2 })) },
      { weight: 1, arbitrary: anyValue },
    ),
    result: fc.oneof(
      { weight: 3, arbitrary: fc.dictionary(fc.string({ maxLength: 4 }), fc.jsonValue({ maxDepth: 2 })) },
      { weight: 1, arbitrary: anyValue },
    ),
    error: fc.oneof(
      {
        weight: 3,
        arbitrary: fc.record(
          {
            code: fc.oneof(fc.integer(), fc.constantFrom(-32601, -32022, 1.5, 1e300), anyValue),
            message: fc.oneof(fc.string({ maxLength: 8 }), anyValue),
            data: anyValue,
          },
          { requiredKeys: [] },
        ),
      },
      { weight: 1, arbitrary: anyValue },
    ),
  },
  { requiredKeys: [] },
);

/** A well-formed message of each kind, for batches and sessions. */
export const validMessage: fc.Arbitrary<Record<string, unknown>> = fc.oneof(
  fc.record({
    jsonrpc: fc.constant("2.0"),
    id: fc.oneof(fc.integer(), fc.string({ maxLength: 4 })),
    method: fc.string({ maxLength: 8 }),
  }),
  fc.record({ jsonrpc: fc.constant("2.0"), method: fc.string({ maxLength: 8 }), params: fc.constant({}) }),
  fc.record({ jsonrpc: fc.constant("2.0"), id: fc.nat(), result: fc.constant({ ok: true }) }),
  fc.record({
    jsonrpc: fc.constant("2.0"),
    id: fc.oneof(fc.nat(), fc.constant(null)),
    error: fc.record({ code: fc.integer(), message: fc.string({ maxLength: 6 }) }),
  }),
);

/** Number literals JSON.parse turns into Infinity, 0, lost precision or -0. */
export const hugeNumberText: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom("1e400", "-1e400", "1e-400", "-0", "123456789012345678901234567890", "9007199254740993"),
  fc
    .tuple(fc.integer({ min: 17, max: 400 }), fc.constantFrom("", "-"))
    .map(([n, sign]) => `${sign}${"9".repeat(n)}`),
);

/** A JSON text nesting `depth` arrays or objects, optionally inside a message's `result` or `params`. */
export function deepText(
  depth: number,
  kind: "array" | "object",
  where: "bare" | "result" | "params" | "id",
): string {
  const inner =
    kind === "array"
      ? `${"[".repeat(depth)}${"]".repeat(depth)}`
      : `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;
  if (where === "bare") return inner;
  if (where === "result") return `{"jsonrpc":"2.0","id":1,"result":{"deep":${inner}}}`;
  if (where === "params") return `{"jsonrpc":"2.0","method":"m","params":{"deep":${inner}}}`;
  return `{"jsonrpc":"2.0","id":${inner},"result":{}}`;
}
