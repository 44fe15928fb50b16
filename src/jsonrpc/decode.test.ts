import assert from "node:assert/strict";
import { test } from "node:test";
import { decodeFrame, decodeText } from "./decode.ts";
import { MAX_JSON_DEPTH } from "./json-depth.ts";

const arrays = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`;
/** A result whose whole message nests exactly `depth` levels (message 1, result 2, the rest inside). */
const resultOfDepth = (depth: number, id: unknown = 1) =>
  `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"v":${arrays(depth - 2)}}}`;

test("S8: a message of exactly MAX_JSON_DEPTH levels is admitted; one more level is refused", () => {
  const within = decodeText(resultOfDepth(MAX_JSON_DEPTH));
  assert.equal(within.ok, true);
  assert.ok(within.ok && "result" in within.messages[0]!);
  assert.deepEqual(decodeText(resultOfDepth(MAX_JSON_DEPTH + 1)), {
    ok: true,
    messages: [{ jsonrpc: "2.0", id: 1, refused: "too_deep", answered: "result" }],
  });
});

test("S8: a too-deep reply keeps only its envelope: the id it answers and whether it was a result", () => {
  const deep = arrays(100_000);
  assert.deepEqual(
    decodeText(`{"jsonrpc":"2.0","id":"c-7","result":{"content":[],"structuredContent":{"d":${deep}}}}`),
    { ok: true, messages: [{ jsonrpc: "2.0", id: "c-7", refused: "too_deep", answered: "result" }] },
  );
  assert.deepEqual(
    decodeText(`{"jsonrpc":"2.0","id":3,"error":{"code":-32000,"message":"x","data":${deep}}}`),
    { ok: true, messages: [{ jsonrpc: "2.0", id: 3, refused: "too_deep", answered: "error" }] },
  );
  // The same through the byte path (stdio frames).
  const bytes = new TextEncoder().encode(resultOfDepth(10_000, 9));
  assert.deepEqual(decodeFrame(bytes), {
    ok: true,
    messages: [{ jsonrpc: "2.0", id: 9, refused: "too_deep", answered: "result" }],
  });
});

test("S8: a too-deep notification, server request or non-message is refused as too_deep, never parsed", () => {
  const deep = arrays(100_000);
  const refused = { ok: false, reason: "too_deep" };
  assert.deepEqual(
    decodeText(`{"jsonrpc":"2.0","method":"notifications/message","params":{"d":${deep}}}`),
    refused,
  );
  assert.deepEqual(
    decodeText(`{"jsonrpc":"2.0","id":4,"method":"sampling/createMessage","params":${deep}}`),
    refused,
  );
  assert.deepEqual(decodeText(deep), refused);
  assert.deepEqual(decodeText(`{"jsonrpc":"2.0","id":${deep},"result":{}}`), refused);
  assert.deepEqual(decodeText(`${"[".repeat(100_000)}`), refused, "cut short, deep all the same");
});

test("S8: a batch with one too-deep member is refused whole; its replies still settle their requests", () => {
  const batch = `[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","method":"n","params":{"d":${arrays(200)}}},{"jsonrpc":"2.0","id":2,"error":{"code":1,"message":"m"}}]`;
  assert.deepEqual(decodeText(batch), {
    ok: true,
    messages: [
      { jsonrpc: "2.0", id: 1, refused: "too_deep", answered: "result" },
      { jsonrpc: "2.0", id: 2, refused: "too_deep", answered: "error" },
    ],
  });
});

test("S8: brackets in strings never make an ordinary reply too deep", () => {
  const text = JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    result: {
      content: [{ type: "text", text: `${"[{".repeat(10_000)} "quoted" \\ ${"]}".repeat(10_000)}` }],
    },
  });
  const r = decodeText(text);
  assert.equal(r.ok, true);
  assert.ok(r.ok && "result" in r.messages[0]!);
});
