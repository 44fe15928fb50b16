// `tether bridge` over stdio in front of a scripted legacy server that reports what crossed: a
// host's cancellation, progress, log messages, list changes and resource updates, and the
// server's own requests (sampling, elicitation, roots), for hosts of both eras. Contract IDs:
// S7 (cancellation crosses), M2 (notifications reach the host), N8 (eras never mix on the wire).

import assert from "node:assert/strict";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { envelope, RawHost, SCRIPTED_SERVER, v1Host, v2Host } from "../helpers/bridge.ts";
import { eventually } from "../helpers/deadline-servers.ts";
import { running } from "../helpers/process-tree.ts";

const MODERN_STDIO = fileURLToPath(new URL("../../examples/servers/modern-stdio.mjs", import.meta.url));

const textOf = (result: unknown) =>
  ((result as { content: { type: string; text?: string }[] }).content[0]?.text ?? "") as string;

test("bridge S7: a host's notifications/cancelled reaches the server", async () => {
  const host = new RawHost(["--", process.execPath, SCRIPTED_SERVER]);
  try {
    await host.initialize();
    host.send({ id: 7, method: "tools/call", params: { name: "wait", arguments: {} } });
    // The call is known to be upstream once a later request on the same line has been answered.
    await host.request(8, "ping");
    host.send({ method: "notifications/cancelled", params: { requestId: 7, reason: "user" } });
    let seen: { cancelled: unknown[] } = { cancelled: [] };
    for (let i = 0; i < 50 && seen.cancelled.length === 0; i++) {
      const r = await host.request(`seen-${i}`, "tools/call", { name: "seen", arguments: {} });
      seen = JSON.parse(textOf(r.result));
    }
    assert.equal(seen.cancelled.length, 1);
    assert.ok(!host.received.some((m) => m.id === 7), "a cancelled request is not answered");
  } finally {
    await host.end();
  }
});

test("bridge M2: every progress notification crosses, in order, before the result", async () => {
  const host = new RawHost(["--", process.execPath, SCRIPTED_SERVER]);
  try {
    await host.initialize();
    await host.request(2, "tools/call", { name: "progress", arguments: {}, _meta: { progressToken: 42 } });
    const seen = host.received
      .filter((m) => m.method === "notifications/progress" || m.id === 2)
      .map((m) => (m.id === 2 ? "result" : (m.params as { progress: number }).progress));
    assert.deepEqual(seen, [1, 2, 3, "result"]);
  } finally {
    await host.end();
  }
});

test("bridge M2: progress, log messages, list changes and resource updates reach a 2025 host", async () => {
  const { client } = await v1Host(["--", process.execPath, SCRIPTED_SERVER]);
  try {
    const {
      LoggingMessageNotificationSchema,
      ToolListChangedNotificationSchema,
      ResourceUpdatedNotificationSchema,
    } = await import("@modelcontextprotocol/sdk/types.js");
    const logs: unknown[] = [];
    let listChanged = 0;
    const updated: string[] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
      logs.push(n.params.data);
    });
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      listChanged++;
    });
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
      updated.push(n.params.uri);
    });
    const progress: number[] = [];
    const result = await client.callTool({ name: "progress", arguments: {} }, undefined, {
      onprogress: (p) => progress.push(p.progress),
    });
    assert.equal(textOf(result), "progressed");
    // SDK 1.32 runs its progress callback on its own schedule, which may come after the result
    // it resolves with; the raw test above checks that every notification crosses before it.
    assert.ok(progress.every((p) => p >= 1 && p <= 3));
    await client.setLoggingLevel("info");
    assert.equal(textOf(await client.callTool({ name: "log", arguments: {} })), "logged at info");
    await client.subscribeResource({ uri: "demo://a" });
    await client.callTool({ name: "touch", arguments: {} });
    // Notifications sent before a result arrive before it; one more round trip settles handlers.
    await client.ping();
    assert.deepEqual(logs, ["a log line"]);
    assert.equal(listChanged, 1);
    assert.deepEqual(updated, ["demo://a"]);
  } finally {
    await client.close();
  }
});

test("bridge: a server's sampling, elicitation and roots requests reach a 2025 host and its answers return", async () => {
  const { client } = await v1Host(["--", process.execPath, SCRIPTED_SERVER], {
    sampling: {},
    elicitation: {},
    roots: {},
  });
  try {
    const { CreateMessageRequestSchema, ElicitRequestSchema, ListRootsRequestSchema } = await import(
      "@modelcontextprotocol/sdk/types.js"
    );
    client.setRequestHandler(CreateMessageRequestSchema, () => ({
      role: "assistant",
      content: { type: "text", text: "hi from the host" },
      model: "test-model",
    }));
    client.setRequestHandler(ElicitRequestSchema, () => ({ action: "accept", content: { name: "Ada" } }));
    client.setRequestHandler(ListRootsRequestSchema, () => ({
      roots: [{ uri: "file:///work", name: "work" }],
    }));
    assert.match(textOf(await client.callTool({ name: "sample", arguments: {} })), /hi from the host/);
    assert.match(textOf(await client.callTool({ name: "elicit", arguments: {} })), /"name":"Ada"/);
    assert.match(textOf(await client.callTool({ name: "roots", arguments: {} })), /file:\/\/\/work/);
  } finally {
    await client.close();
  }
});

test("bridge M4: URL-mode elicitation is declared to the server only when the host declared it", async () => {
  const declared = async (elicitation: object) => {
    const { client } = await v1Host(["--", process.execPath, SCRIPTED_SERVER], { elicitation });
    try {
      const seen = JSON.parse(textOf(await client.callTool({ name: "seen", arguments: {} })));
      return (seen.clientCapabilities as { elicitation?: unknown }).elicitation;
    } finally {
      await client.close();
    }
  };
  assert.deepEqual(await declared({ form: {}, url: {} }), { form: {}, url: {} });
  assert.deepEqual(await declared({ url: {} }), { url: {} });
  assert.deepEqual(await declared({}), {}, "form only, as the host declared");
  assert.deepEqual(await declared({ form: {} }), {}, "form only");
});

test("bridge N8: a 2026-07-28 host answers a legacy server's sampling request in an input_required round", async () => {
  const { client } = await v2Host(
    ["--", process.execPath, SCRIPTED_SERVER],
    { pin: "2026-07-28" },
    {
      sampling: {},
    },
  );
  try {
    client.setRequestHandler("sampling/createMessage", () => ({
      role: "assistant",
      content: { type: "text", text: "modern answer" },
      model: "m",
    }));
    assert.match(textOf(await client.callTool({ name: "sample", arguments: {} })), /modern answer/);
  } finally {
    await client.close();
  }
});

test("bridge N8: a raw 2026-07-28 host sees input_required, retries with requestState, gets the result", async () => {
  const host = new RawHost(["--", process.execPath, SCRIPTED_SERVER]);
  try {
    const caps = { sampling: {} };
    const first = await host.request(1, "tools/call", { name: "sample", arguments: {}, ...envelope(caps) });
    const result = first.result as {
      resultType: string;
      inputRequests: Record<string, { method: string }>;
      requestState: string;
    };
    assert.equal(result.resultType, "input_required");
    const [key, asked] = Object.entries(result.inputRequests)[0]!;
    assert.equal(asked.method, "sampling/createMessage");
    const second = await host.request(2, "tools/call", {
      name: "sample",
      arguments: {},
      requestState: result.requestState,
      inputResponses: { [key]: { role: "assistant", content: { type: "text", text: "raw" }, model: "m" } },
      ...envelope(caps),
    });
    const done = second.result as { resultType: string; content: { text: string }[] };
    assert.equal(done.resultType, "complete");
    assert.match(done.content[0]!.text, /raw/);
  } finally {
    await host.end();
  }
});

test("bridge N8: a 2026-07-28 host's subscriptions/listen carries a legacy server's updates, tagged", async () => {
  const host = new RawHost(["--", process.execPath, SCRIPTED_SERVER]);
  try {
    host.send({
      id: "listen-1",
      method: "subscriptions/listen",
      params: {
        notifications: { toolsListChanged: true, resourceSubscriptions: ["demo://a"] },
        ...envelope(),
      },
    });
    const ack = await host.next((m) => m.method === "notifications/subscriptions/acknowledged");
    const params = ack.params as { notifications: Record<string, unknown>; _meta: Record<string, unknown> };
    assert.equal(params._meta["io.modelcontextprotocol/subscriptionId"], "listen-1");
    assert.deepEqual(params.notifications, { toolsListChanged: true, resourceSubscriptions: ["demo://a"] });
    await host.request(2, "tools/call", { name: "touch", arguments: {}, ...envelope() });
    const updated = await host.next((m) => m.method === "notifications/resources/updated");
    assert.equal(
      (updated.params as { _meta: Record<string, unknown> })._meta["io.modelcontextprotocol/subscriptionId"],
      "listen-1",
    );
    await host.next((m) => m.method === "notifications/tools/list_changed");
    host.send({ method: "notifications/cancelled", params: { requestId: "listen-1" } });
    let seen: { unsubscribed: string[] } = { unsubscribed: [] };
    for (let i = 0; i < 50 && seen.unsubscribed.length === 0; i++) {
      const r = await host.request(`seen-${i}`, "tools/call", { name: "seen", arguments: {}, ...envelope() });
      seen = JSON.parse(textOf(r.result));
    }
    assert.deepEqual(seen.unsubscribed, ["demo://a"]);
  } finally {
    await host.end();
  }
});

test("bridge N8: what has no counterpart is refused with a clear error, never dropped", async () => {
  const host = new RawHost(["--", process.execPath, MODERN_STDIO, "--modern-only"]);
  try {
    await host.initialize();
    const reply = await host.request(2, "resources/subscribe", { uri: "demo://greeting" });
    // A 2026-07-28 server takes subscriptions only on a listen stream; whatever the client makes
    // of that, the host gets an answer: a result, or an error whose data names code and reason.
    if (reply.error !== undefined) {
      const error = reply.error as { code: number; data: Record<string, unknown> };
      assert.equal(typeof error.data.code, "string");
      assert.equal(typeof error.data.reason, "string");
    } else assert.deepEqual(reply.result, {});
    const call = await host.request(4, "tasks/list", {});
    assert.ok(call.error !== undefined || call.result !== undefined);
    const modern = await host.request(
      3,
      "tools/list",
      envelope({}, { "io.modelcontextprotocol/protocolVersion": "2099-01-01" }),
    );
    assert.equal((modern.error as { code: number }).code, -32022);
  } finally {
    await host.end();
  }
});

test("bridge S6: the host vanishing mid-call ends the bridge and the stdio server's process tree", async () => {
  const host = new RawHost(["--", process.execPath, SCRIPTED_SERVER]);
  await host.initialize();
  const pidReply = await host.request(2, "tools/call", { name: "pid", arguments: {} });
  const pid = Number(textOf(pidReply.result));
  assert.ok(running(pid));
  host.send({ id: 3, method: "tools/call", params: { name: "wait", arguments: {} } });
  await host.request(4, "ping");
  // The host goes away without a word: its end of the pipe closes.
  host.child.stdin.destroy();
  const code = await host.exited;
  assert.equal(code, 0);
  assert.ok(await eventually(() => !running(pid), 10_000), "the server process is gone");
  assert.equal(host.stderr, "");
});

test("bridge K1: the server dying mid-call answers the host's call with an error, then one record on stderr", async () => {
  const host = new RawHost(["--", process.execPath, SCRIPTED_SERVER]);
  await host.initialize();
  const reply = await host.request(2, "tools/call", { name: "crash", arguments: {} });
  const error = reply.error as { code: number; data: Record<string, unknown> };
  assert.equal(error.data.code, "connection");
  assert.equal(error.data.effect, "unknown");
  const code = await host.exited;
  assert.equal(code, 3);
  const lines = host.stderr.trim().split("\n");
  assert.equal(lines.length, 1);
  assert.equal(JSON.parse(lines[0]!).code, "connection");
});
