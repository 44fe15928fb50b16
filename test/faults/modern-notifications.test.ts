// 2026-07-28 servers send list changes and resource updates only on a `subscriptions/listen`
// stream the client opened, and only what it asked for. Against the official server (2.4.0,
// Streamable HTTP in process and stdio in a child) and hostile stdio scripts: subscribeResource
// and onListChanged open the stream, updates arrive through the usual handlers, a replaced stream
// delivers nothing twice, unsubscribing and closing end the stream on the server, and a server
// that refuses is a typed error. Nothing sleeps: each wait is for an event.

import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { after, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { createMcpHandler, type McpServer } from "@modelcontextprotocol/server";
import {
  type Client,
  type ConnectOptions,
  connect,
  type ResourceUpdate,
  TetherError,
} from "../../src/index.ts";
import { until } from "../helpers/fake-clock.ts";
import { type StdioScript, startStdioScript } from "../helpers/hostile.ts";

interface Publish {
  resourceUpdated(server: McpServer, uri: string): void | Promise<void>;
  toolsChanged(server: McpServer): void | Promise<void>;
}
interface FixtureModule {
  createNotifyingServer(publish: Publish): McpServer;
}
const FIXTURE = new URL("../fixtures/modern-notifications/server.mjs", import.meta.url);
const fixture = (await import(FIXTURE.href)) as FixtureModule;

const clients: Client[] = [];
const cleanups: (() => void | Promise<void>)[] = [];
after(async () => {
  await Promise.all(clients.map((c) => c.close()));
  for (const cleanup of cleanups) await cleanup();
});

async function open(options: ConnectOptions): Promise<Client> {
  const client = await connect({ eraHints: false, timeoutMs: 15_000, ...options });
  clients.push(client);
  return client;
}

/** The official 2026-07-28 server over Streamable HTTP in this process, publishing on its handler's bus. */
async function httpServer(): Promise<{ url: string; listeners: () => number }> {
  const handler = createMcpHandler(
    () =>
      fixture.createNotifyingServer({
        resourceUpdated: (_server, uri) => handler.notify.resourceUpdated(uri),
        toolsChanged: () => handler.notify.toolsChanged(),
      }),
    { legacy: "reject" },
  );
  const server: Server = createServer((req, res) => {
    const controller = new AbortController();
    res.on("close", () => {
      if (!res.writableFinished) controller.abort();
    });
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers))
      if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(", ") : value);
    const request = new Request(new URL(req.url ?? "/", "http://127.0.0.1"), {
      method: req.method,
      headers,
      body: req.method === "POST" ? (Readable.toWeb(req) as ReadableStream) : undefined,
      duplex: "half",
      signal: controller.signal,
    } as RequestInit);
    void handler.fetch(request).then(async (response) => {
      res.writeHead(response.status, Object.fromEntries(response.headers));
      if (!response.body) return void res.end();
      await pipeline(Readable.fromWeb(response.body as never), res).catch(() => {});
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(async () => {
    await handler.close();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const { port } = server.address() as { port: number };
  const bus = handler.bus as { listenerCount?: number };
  return { url: `http://127.0.0.1:${port}/mcp`, listeners: () => bus.listenerCount ?? -1 };
}

/** Updates as they arrive, and a wait for the next one about `uri`. */
function updates(client: Client): { seen: string[]; next(uri: string): Promise<void> } {
  const seen: string[] = [];
  const waiters: { uri: string; resolve: () => void }[] = [];
  client.onResourceUpdated((u: ResourceUpdate) => {
    seen.push(u.uri);
    for (const w of waiters.filter((x) => x.uri === u.uri)) {
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve();
    }
  });
  return { seen, next: (uri) => new Promise<void>((resolve) => waiters.push({ uri, resolve })) };
}

function isError(code: string, reason?: string) {
  return (e: unknown) => {
    assert.ok(e instanceof TetherError, `not a TetherError: ${String(e)}`);
    assert.equal(e.code, code, `${e.code}/${e.reason}: ${e.message}`);
    if (reason !== undefined) assert.equal(e.reason, reason);
    assert.equal(e.effect, "none");
    return true;
  };
}

describe("2026-07-28 over Streamable HTTP (official server)", () => {
  test("M2 M1: subscribeResource opens a listen stream; updates arrive for the subscribed URI only", async () => {
    const s = await httpServer();
    const client = await open({ url: s.url });
    assert.equal(client.era, "modern");
    const u = updates(client);
    await client.subscribeResource("note://a");
    assert.equal(s.listeners(), 1, "one listen stream is open on the server");
    const arrived = u.next("note://a");
    await client.callTool("touch", { uri: "note://b" });
    await client.callTool("touch", { uri: "note://a" });
    await arrived;
    assert.deepEqual(u.seen, ["note://a"], "the unsubscribed URI's update was not sent");
  });

  test("M2: onListChanged('tools') asks for tool list changes; the change drops cachedTools", async () => {
    const s = await httpServer();
    const client = await open({ url: s.url });
    await client.listTools();
    assert.ok(client.cachedTools);
    const seen: string[] = [];
    client.onNotification("*", (n) => void seen.push(n.method));
    let heard!: () => void;
    const changed = new Promise<void>((resolve) => {
      heard = resolve;
    });
    client.onListChanged("tools", () => heard());
    // The stream opens in the background; once it is open on the server, the change is asked for.
    await until(() => s.listeners() === 1, 10_000, "the listen stream to open");
    await client.callTool("retool");
    await changed;
    assert.equal(client.cachedTools, undefined);
    assert.ok(
      !seen.includes("notifications/subscriptions/acknowledged"),
      "the stream's own acknowledgement is not handed on",
    );
  });

  test("M2: a stream replaced by a wider one delivers nothing twice", async () => {
    const s = await httpServer();
    const client = await open({ url: s.url });
    const u = updates(client);
    await client.subscribeResource("note://a");
    await client.subscribeResource("note://b");
    // The first stream is closed once the second is acknowledged: one listener left on the server.
    await until(() => s.listeners() === 1, 10_000, "the replaced stream to close");
    const a = u.next("note://a");
    await client.callTool("touch", { uri: "note://a" });
    await a;
    const b = u.next("note://b");
    await client.callTool("touch", { uri: "note://b" });
    await b;
    assert.deepEqual(u.seen, ["note://a", "note://b"]);
  });

  test("M2 C5: unsubscribing the last URI closes the stream on the server, and so does close()", async () => {
    const s = await httpServer();
    const client = await open({ url: s.url });
    await client.subscribeResource("note://a");
    assert.equal(s.listeners(), 1);
    await client.unsubscribeResource("note://a");
    await until(() => s.listeners() === 0, 10_000, "the stream to close after unsubscribing");
    await client.subscribeResource("note://a");
    assert.equal(s.listeners(), 1);
    await client.close();
    await until(() => s.listeners() === 0, 10_000, "the stream to close with the client");
  });
});

describe("2026-07-28 over stdio (official server)", () => {
  test("M2: list changes and resource updates arrive on the shared channel; unsubscribing stops them", async () => {
    const client = await open({ command: process.execPath, args: [fileURLToPath(FIXTURE)] });
    assert.equal(client.era, "modern");
    const u = updates(client);
    let heard!: () => void;
    const changed = new Promise<void>((resolve) => {
      heard = resolve;
    });
    client.onListChanged("tools", () => heard());
    // Changes of the stream run in order: once the subscription is acknowledged, the stream
    // carries the tool list changes asked for before it too.
    await client.subscribeResource("note://a");
    await client.callTool("retool");
    await changed;

    const a = u.next("note://a");
    await client.callTool("touch", { uri: "note://a" });
    await a;

    await client.unsubscribeResource("note://a");
    await client.subscribeResource("note://b");
    const b = u.next("note://b");
    await client.callTool("touch", { uri: "note://a" });
    await client.callTool("touch", { uri: "note://b" });
    await b;
    assert.deepEqual(u.seen, ["note://a", "note://b"], "no update for the URI no longer subscribed");
  });
});

describe("2026-07-28 servers that refuse", () => {
  const scripts: StdioScript[] = [];
  after(() => {
    for (const s of scripts) s.dispose();
  });

  /** A modern stdio script: answers server/discover with `capabilities`, then `serve(m)` (or -32601). */
  function modern(capabilities: string, body: string): StdioScript {
    const s = startStdioScript(`
const reply = (m, result) => send({ jsonrpc: "2.0", id: m.id, result: { resultType: "complete", ...result } });
const fail = (m, code) => send({ jsonrpc: "2.0", id: m.id, error: { code, message: "no" } });
const serve = (m) => { ${body} };
onMessage((m) => {
  if (m.method === "server/discover")
    return reply(m, { supportedVersions: ["2026-07-28"], capabilities: ${capabilities} });
  if (m.id === undefined) return serve(m);
  if (serve(m) === undefined) fail(m, -32601);
});
`);
    scripts.push(s);
    return s;
  }

  test("M2: a server without subscriptions/listen: subscribeResource is remote_error with its code, effect none", async () => {
    const s = modern("{ resources: {} }", "");
    const client = await open({ command: s.command, args: s.args });
    await assert.rejects(client.subscribeResource("note://a"), (e: unknown) => {
      isError("remote_error")(e);
      assert.equal((e as TetherError).rpcCode, -32601);
      return true;
    });
    const [pid] = s.pids();
    assert.ok(s.received(pid!).includes("subscriptions/listen"));
    assert.ok(!s.received(pid!).includes("resources/subscribe"), "the removed method is never sent");
  });

  test("M2: a server that acknowledges without the URI: remote_error / subscription_refused", async () => {
    const s = modern(
      "{ resources: {} }",
      `if (m.method === "subscriptions/listen") {
        send({ jsonrpc: "2.0", method: "notifications/subscriptions/acknowledged",
          params: { _meta: { "io.modelcontextprotocol/subscriptionId": m.id }, notifications: {} } });
        return true;
      }`,
    );
    const client = await open({ command: s.command, args: s.args });
    await assert.rejects(
      client.subscribeResource("note://a"),
      isError("remote_error", "subscription_refused"),
    );
  });

  test("M2 M1: a server that never acknowledges: subscribeResource fails within its budget and cancels the stream", async () => {
    const s = modern(
      "{ resources: { subscribe: true } }",
      `if (m.method === "subscriptions/listen") return true;`,
    );
    const client = await open({ command: s.command, args: s.args });
    const started = performance.now();
    await assert.rejects(client.subscribeResource("note://a", { timeoutMs: 300 }), isError("timeout"));
    assert.ok(performance.now() - started < 10_000);
    const [pid] = s.pids();
    await until(
      () => s.received(pid!).includes("notifications/cancelled"),
      10_000,
      "the listen to be cancelled",
    );
  });
});
