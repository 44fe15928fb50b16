// The requests the server sends a host, checked without processes: handlers only for what the host
// declared, a legacy host asked with a request of the bridge's own and its answer (or refusal)
// handed back, a request no longer needed cancelled to the host, and a modern host asked only
// inside a request it can answer in.
import assert from "node:assert/strict";
import { test } from "node:test";
import { Redactor } from "../errors/redact.ts";
import { TetherError } from "../errors/tether-error.ts";
import type { JsonObject, JsonRpcId, JsonRpcMessage } from "../jsonrpc/messages.ts";
import { InputRounds } from "./input-rounds.ts";
import { OpenRequests } from "./open-requests.ts";
import { ServerRequests } from "./server-requests.ts";

/** A message the bridge sent the host, read loosely. */
type Sent = { id?: JsonRpcId; method?: string; params?: JsonObject };

function serverRequests(modern = false) {
  const sent: { message: Sent; related?: JsonRpcId }[] = [];
  const send = (message: JsonRpcMessage, related?: JsonRpcId) =>
    sent.push({ message: message as Sent, related });
  const open = new OpenRequests({ send, redactor: new Redactor([]), serverInfo: () => undefined });
  const requests = new ServerRequests({
    send,
    open,
    rounds: new InputRounds(open, send),
    modernHost: () => modern,
  });
  return { requests, open, sent };
}

test("handlers exist for exactly the capabilities the host declared", () => {
  const { requests } = serverRequests();
  assert.deepEqual(Object.keys(requests.handlers({ sampling: {}, roots: {} })).sort(), ["roots", "sampling"]);
  assert.deepEqual(Object.keys(requests.handlers({ elicitation: {}, sampling: true })), ["elicitation"]);
});

test("a legacy host is asked with a request of the bridge's own, on its one open request's stream", async () => {
  const { requests, open, sent } = serverRequests();
  open.add({ id: 5, method: "tools/call", modern: false, controller: new AbortController(), logs: false });
  const answer = requests.handlers({ sampling: {} }).sampling!(
    { messages: [] },
    { signal: new AbortController().signal },
  );
  assert.equal(sent.length, 1);
  const asked = sent[0]!;
  assert.equal(asked.message.method, "sampling/createMessage");
  assert.deepEqual(asked.message.params, { messages: [] });
  assert.equal(asked.related, 5);
  requests.answer({ jsonrpc: "2.0", id: "unknown", result: {} });
  requests.answer({ jsonrpc: "2.0", id: asked.message.id!, result: { role: "assistant" } });
  assert.deepEqual(await answer, { role: "assistant" });
});

test("a legacy host's refusal fails the server's request; so does the host going away", async () => {
  const { requests, sent } = serverRequests();
  const roots = requests.handlers({ roots: {} }).roots!;
  const refused = roots({ signal: new AbortController().signal });
  requests.answer({ jsonrpc: "2.0", id: sent[0]!.message.id!, error: { code: -32601, message: "no" } });
  await assert.rejects(
    Promise.resolve(refused),
    (e) => e instanceof TetherError && e.reason === "host_refused",
  );
  const abandoned = roots({ signal: new AbortController().signal });
  requests.close("the host went away");
  await assert.rejects(Promise.resolve(abandoned), /the host went away/);
});

test("a server request no longer needed is cancelled to a legacy host", async () => {
  const { requests, sent } = serverRequests();
  const controller = new AbortController();
  const asked = requests.handlers({ elicitation: {} }).elicitation!(
    { message: "?" },
    { signal: controller.signal },
  );
  const id = sent[0]!.message.id;
  controller.abort(new Error("the server cancelled"));
  await assert.rejects(Promise.resolve(asked), /the server cancelled/);
  assert.deepEqual(sent[1]?.message, {
    jsonrpc: "2.0",
    method: "notifications/cancelled",
    params: { requestId: id, reason: "no longer needed" },
  });
  requests.answer({ jsonrpc: "2.0", id: id!, result: {} });
  assert.equal(sent.length, 2);
});

test("a modern host is asked only inside a request it can answer in", async () => {
  const { requests, sent } = serverRequests(true);
  const asked = requests.handlers({ roots: {} }).roots!({ signal: new AbortController().signal });
  await assert.rejects(
    Promise.resolve(asked),
    (e) => e instanceof TetherError && e.reason === "input_unroutable",
  );
  assert.deepEqual(sent, []);
});
