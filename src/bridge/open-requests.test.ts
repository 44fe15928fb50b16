// The host's open requests, checked without processes: each answered once and a turn after its
// cause, one the host cancelled never, a refusal at once, and the controllers of answered requests
// reused only when nothing can still abort or hear them.
import assert from "node:assert/strict";
import { test } from "node:test";
import { Redactor } from "../errors/redact.ts";
import type { JsonRpcId, JsonRpcMessage } from "../jsonrpc/messages.ts";
import { type InFlight, OpenRequests } from "./open-requests.ts";

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

function openRequests() {
  const sent: { message: JsonRpcMessage; related: JsonRpcId | undefined }[] = [];
  const open = new OpenRequests({
    send: (message, related) => sent.push({ message, related }),
    redactor: new Redactor([]),
    serverInfo: () => undefined,
  });
  const entry = (id: JsonRpcId, forwarded = false): InFlight => {
    const e: InFlight = {
      id,
      method: "tools/list",
      modern: false,
      controller: open.controller(),
      logs: false,
    };
    if (forwarded) e.forwarded = true;
    open.add(e);
    return e;
  };
  return { open, sent, entry };
}

test("a request is answered once, a turn after its result, on its own stream", async () => {
  const { open, sent, entry } = openRequests();
  const e = entry(1);
  open.reply(e, { tools: [] });
  open.fail(e, new Error("too late"));
  assert.equal(sent.length, 0, "the reply waits the turn the server's notifications take");
  assert.equal(open.size, 0);
  await turn();
  assert.deepEqual(sent, [{ message: { jsonrpc: "2.0", id: 1, result: { tools: [] } }, related: 1 }]);
});

test("a request taken out (cancelled by the host) is never answered", async () => {
  const { open, sent, entry } = openRequests();
  const e = entry("a");
  open.delete(e.id);
  open.reply(e, {});
  open.fail(e, new Error("cancelled"));
  await turn();
  assert.deepEqual(sent, []);
});

test("a refusal goes out at once, and a failure as a JSON-RPC error", async () => {
  const { open, sent, entry } = openRequests();
  open.error(7, { code: -32600, message: "no" });
  assert.deepEqual(sent, [
    { message: { jsonrpc: "2.0", id: 7, error: { code: -32600, message: "no" } }, related: 7 },
  ]);
  open.fail(entry(8), new Error("boom"));
  await turn();
  const reply = sent[1]?.message as { id?: JsonRpcId; error?: { code: number } };
  assert.equal(reply.id, 8);
  assert.equal(typeof reply.error?.code, "number");
});

test("the one open request is named as the owner of what comes next; with two, none is", () => {
  const { open, entry } = openRequests();
  assert.equal(open.sole(), undefined);
  entry(1);
  assert.equal(open.sole(), 1);
  entry(2);
  assert.equal(open.sole(), undefined);
});

test("an answered forwarded request's controller serves the next; an aborted or listened-to one does not", () => {
  const { open, entry } = openRequests();
  const forwarded = entry(1, true);
  open.reply(forwarded, {});
  assert.equal(open.controller(), forwarded.controller, "reused");

  const aborted = entry(2, true);
  aborted.controller.abort(new Error("cancelled"));
  open.reply(aborted, {});
  assert.notEqual(open.controller(), aborted.controller);

  const heard = entry(3, true);
  heard.controller.signal.addEventListener("abort", () => {});
  open.reply(heard, {});
  assert.notEqual(open.controller(), heard.controller);

  const notForwarded = entry(4);
  open.reply(notForwarded, {});
  assert.notEqual(open.controller(), notForwarded.controller);
});

test("closing aborts every open request, and no controller is kept after", () => {
  const { open, entry } = openRequests();
  const a = entry(1, true);
  const b = entry(2, true);
  open.close("the host went away");
  assert.equal(a.controller.signal.aborted, true);
  assert.equal((b.controller.signal.reason as Error).message, "the host went away");
  const c = new AbortController();
  open.recycle(c);
  assert.notEqual(open.controller(), c);
});
