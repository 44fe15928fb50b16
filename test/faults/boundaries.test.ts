// Exact byte boundaries (CONTRACT P5, P6) on every path a reply can take: a JSON body, a
// Streamable HTTP SSE reply stream, a legacy HTTP+SSE event, and a stdio line. Each reply is built
// to exactly N bytes with three-byte characters in it and written in two chunks split inside one
// of them: ceiling N accepts it, ceiling N−1 refuses it, and the refusal reports observedBytes
// (what was read, never a declared Content-Length). Also: a Content-Length above the ceiling is
// refused before the body is read, and a 20 MB error body never becomes a 20 MB message.

import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import { type Client, type ConnectOptions, connect, TetherError } from "../../src/index.ts";
import {
  delay,
  flood,
  replyOfBytes,
  SPLIT_GAP_MS,
  type SseAnswer,
  scriptedLegacySse,
  splitInsideCharacter,
  sseNotificationOfBytes,
  sseReplyOfBytes,
  stdioServer,
  writeSplit,
} from "../fixtures/budgets/servers.ts";
import { fakeClock } from "../helpers/fake-clock.ts";
import { type Handler, hostileSet, legacyStreamableHandler, openSse } from "../helpers/hostile.ts";

const base = { eraHints: false, listen: false } as const satisfies Partial<ConnectOptions>;

/** The size of every exact reply here: big enough for several chunks' worth of framing to matter. */
const N = 6_000;
const ERROR_BODY_BYTES = 20 * 1024 * 1024;

const kept = hostileSet();
after(kept.closeAll);
const { http } = kept;
const open = async (options: ConnectOptions) => kept.client(await connect({ ...base, ...options }));

async function refusal(run: () => Promise<unknown>): Promise<{ error: TetherError }> {
  try {
    await run();
  } catch (error) {
    assert.ok(TetherError.is(error), `expected a TetherError, got ${String(error)}`);
    return { error };
  }
  throw new assert.AssertionError({ message: "expected a refusal, but the reply was accepted" });
}

const describeError = (e: TetherError) => JSON.stringify(e.toJSON());
const textOf = (result: { content: unknown[] }) => String((result.content[0] as { text?: unknown }).text);

/** Legacy Streamable HTTP whose `tools/call` is answered by `call`. */
function streamableCall(call: Handler): Handler {
  return legacyStreamableHandler({ "tools/call": call });
}

/**
 * Calls `exact` on a client whose call ceiling is `ceiling`; the reply is N bytes on the path
 * under test. Returns the result or the refusal.
 */
type Connector = (ceiling: number) => Promise<Client>;

/**
 * P6 on a shared stream (HTTP+SSE, stdio): with the stream's own ceiling at 2 KiB, the N-byte
 * reply is refused as a limit, and the session closes, since the stream cannot be resynchronised.
 */
async function assertStreamCeilingCloses(target: ConnectOptions): Promise<void> {
  const CEILING = 2_048;
  const client = await open({ ...target, maxResponseBytes: CEILING, maxFrameBytes: CEILING });
  const { error } = await refusal(() => client.callTool("exact"));
  assert.equal(error.code, "limit", describeError(error));
  assert.ok((error.observedBytes ?? 0) > CEILING, `observedBytes ${error.observedBytes}`);
  assert.notEqual(client.state, "open", "the stream cannot be resynchronised");
  await refusal(() => client.callTool("echo", { text: "x" }));
}

/** The P5 boundary on one path: ceiling N accepts the N-byte reply, ceiling N−1 refuses it. */
async function assertBoundary(connectWith: Connector): Promise<TetherError> {
  const accepting = await connectWith(N);
  const result = await accepting.callTool("exact");
  assert.ok(textOf(result).endsWith("€"), "the reply arrived whole, multibyte characters intact");

  const refusing = await connectWith(N - 1);
  const { error } = await refusal(() => refusing.callTool("exact"));
  assert.equal(error.code, "limit", describeError(error));
  assert.equal(error.phase, "call");
  assert.equal(error.stage, "call");
  assert.ok(
    (error.observedBytes ?? 0) >= N,
    `observedBytes ${error.observedBytes} counts what was read, refused bytes included (≥ ${N})`,
  );
  assert.doesNotMatch(JSON.stringify(error.toJSON()), /€€€/, "no reply text in the error");
  return error;
}

// ---------------------------------------------------------------- JSON body

describe("P5: a JSON body", () => {
  test("P5: a chunked JSON reply of exactly N bytes passes with ceiling N and is refused with N−1 (a character split across writes)", async () => {
    const s = await http(
      streamableCall(async (res, rec) => {
        // No Content-Length: chunked, so only counting the body itself can find the boundary.
        res.writeHead(200, { "content-type": "application/json" });
        await writeSplit(res, replyOfBytes(rec.rpcId, N));
      }),
    );
    const error = await assertBoundary((ceiling) =>
      open({ url: s.url, call: { maxResponseBytes: ceiling } }),
    );
    assert.equal(error.reason, "response_too_large");
    assert.equal(error.observedBytes, N, "everything read, the refused chunk included");
  });

  test("P5: a Content-Length of exactly the ceiling passes; above it, the reply is refused before the body is read (observedBytes 0)", async () => {
    const s = await http(
      streamableCall(async (res, rec) => {
        const body = replyOfBytes(rec.rpcId, N);
        res.writeHead(200, { "content-type": "application/json", "content-length": String(N) });
        await writeSplit(res, body);
      }),
    );
    const accepting = await open({ url: s.url, call: { maxResponseBytes: N } });
    assert.ok(textOf(await accepting.callTool("exact")).endsWith("€"));
    const refusing = await open({ url: s.url, call: { maxResponseBytes: N - 1 } });
    const { error } = await refusal(() => refusing.callTool("exact"));
    assert.equal(error.code, "limit", describeError(error));
    assert.equal(error.reason, "response_too_large");
    assert.equal(error.observedBytes, 0, "nothing was read: the declared length is not an observation");
  });

  test("P5: a declared Content-Length far above the ceiling is refused at once, without waiting for a body that never comes", async () => {
    const declared = 50 * 1024 * 1024;
    const s = await http(
      streamableCall((res) => {
        res.writeHead(200, { "content-type": "application/json", "content-length": String(declared) });
        res.write('{"jsonrpc":"2.0"');
        // ...and nothing more: a reader that waited for the body would hang here.
      }),
    );
    // A fake clock that never moves: refused at all means refused before any limit.
    const clock = fakeClock();
    const client = await open({
      url: s.url,
      call: { maxResponseBytes: 64 * 1024, timeoutMs: 10_000 },
      deps: { clock },
    });
    const { error } = await refusal(() => client.callTool("exact"));
    assert.equal(error.code, "limit", describeError(error));
    assert.equal(error.observedBytes, 0);
    assert.notEqual(error.observedBytes, declared, "never the trusted Content-Length");
    assert.deepEqual(clock.fired(), [], "refused at once, not when a limit fired");
  });
});

// ---------------------------------------------------------------- Streamable HTTP SSE reply

describe("P5: a Streamable HTTP SSE reply", () => {
  test("P5: the whole reply stream counts: two events totalling exactly N bytes pass with N, are refused with N−1", async () => {
    const NOTE_BYTES = 1_000;
    const s = await http(
      streamableCall(async (res, rec) => {
        openSse(res);
        // A notification first, then the response: neither alone is near the ceiling.
        res.write(sseNotificationOfBytes(NOTE_BYTES));
        await delay(20);
        await writeSplit(res, sseReplyOfBytes(rec.rpcId, N - NOTE_BYTES));
      }),
    );
    const error = await assertBoundary((ceiling) =>
      open({ url: s.url, call: { maxResponseBytes: ceiling } }),
    );
    assert.equal(error.reason, "response_too_large");
    assert.equal(error.observedBytes, N);
  });
});

// ---------------------------------------------------------------- legacy HTTP+SSE event

describe("P5: a legacy HTTP+SSE event", () => {
  const exactEvent =
    (bytes: number): SseAnswer =>
    async (rec, stream) => {
      if (rec.rpcMethod !== "tools/call") return false;
      // The stream is shared and stays open: the two halves go out, the stream does not end.
      const [a, b] = splitInsideCharacter(sseReplyOfBytes(rec.rpcId, bytes));
      stream.write(a);
      await delay(SPLIT_GAP_MS);
      stream.write(b);
      return true;
    };

  test("P5: an event of exactly N bytes, framing included, passes with ceiling N and is refused with N−1", async () => {
    const s = kept.server(await scriptedLegacySse(exactEvent(N)));
    const error = await assertBoundary((ceiling) =>
      open({ url: s.url, transport: "sse", call: { maxResponseBytes: ceiling } }),
    );
    assert.equal(error.observedBytes, N);
  });

  test("P6: an event over the shared stream's own ceiling closes the session", async () => {
    const s = kept.server(await scriptedLegacySse(exactEvent(N)));
    await assertStreamCeilingCloses({ url: s.url, transport: "sse" });
  });
});

// ---------------------------------------------------------------- stdio line

describe("P5: a stdio line", () => {
  const exactLine = () => stdioServer({ call: `await splitLine(exactResult(m.id, ${N}));` });

  test("P5: a line of exactly N bytes (its newline not counted) passes with ceiling N and is refused with N−1", async () => {
    const script = kept.script(exactLine());
    const error = await assertBoundary((ceiling) =>
      open({ command: script.command, args: script.args, call: { maxResponseBytes: ceiling } }),
    );
    assert.equal(error.observedBytes, N);
  });

  test("P6: a line over the stream's own ceiling closes the session", async () => {
    const script = kept.script(exactLine());
    await assertStreamCeilingCloses({ command: script.command, args: script.args });
  });
});

// ---------------------------------------------------------------- error bodies

describe("P6: an error body is never read whole", () => {
  test("P6/X2: a streamed 20 MB HTTP 500 body gives a prompt upstream error with no body text in it", async () => {
    const MARK = "ERROR-PAGE-TEXT";
    let sent: ReturnType<typeof flood> | undefined;
    const s = await http(
      streamableCall((res) => {
        res.writeHead(500, { "content-type": "text/plain" });
        sent = flood(res, {
          prefix: `${MARK} `,
          totalBytes: ERROR_BODY_BYTES,
          chunkBytes: 64 * 1024,
          fill: `${MARK} `,
        });
      }),
    );
    // A fake clock that never moves: the error came from the status, not from a limit firing.
    const clock = fakeClock();
    const client = await open({ url: s.url, call: { timeoutMs: 15_000 }, deps: { clock } });
    const { error } = await refusal(() => client.callTool("exact"));
    assert.equal(error.code, "upstream", describeError(error));
    assert.equal(error.httpStatus, 500);
    assert.deepEqual(clock.fired(), [], "at once, not when a limit fired");
    const record = JSON.stringify(error.toJSON());
    assert.ok(!record.includes(MARK) && !error.message.includes(MARK), `no body text: ${record}`);
    assert.ok(record.length < 1_000, `the record is small (${record.length} characters)`);
    assert.equal(error.rpcMessage, undefined);
    // The reader let go: the server saw the client leave long before 20 MB.
    await sent?.done;
    assert.ok(sent?.hungUp(), "the client hung up");
    assert.ok(
      (sent?.written() ?? 0) < ERROR_BODY_BYTES / 2,
      `the server wrote ${sent?.written()} bytes before the client left`,
    );
  });
});
