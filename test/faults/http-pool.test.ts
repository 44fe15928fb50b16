// The built-in HTTP client (src/transport/node-http.ts), which the HTTP transports use on Node when
// the caller brings no fetch: its connections are the transport's to own (C5, C9), what arrives
// through it is bounded as fetch's replies are (P5), and a hostile answer (cut off, compressed,
// a header that would split the request) ends in a typed error, never a stray exception.
//
// Every wait here is for an event (a socket closing, a request arriving), bounded by STUCK_MS so
// a hang fails the test instead of stalling it.

import assert from "node:assert/strict";
import { subscribe } from "node:diagnostics_channel";
import type { Socket } from "node:net";
import { after, describe, test } from "node:test";
import { gzipSync } from "node:zlib";
import { type ConnectOptions, connect, TetherError } from "../../src/index.ts";
import { NodeHttp } from "../../src/transport/node-http.ts";
import {
  type Handler,
  type Loopback,
  legacyHttp,
  legacySse,
  loopback,
  openEventStream,
  rpcResult,
} from "../helpers/deadline-servers.ts";
import { until } from "../helpers/fake-clock.ts";

/** Real time an event may take before the test calls it stuck; never a measurement. */
const STUCK_MS = 20_000;

const base = { eraHints: false, timeoutMs: 10_000 } as const satisfies Partial<ConnectOptions>;

const servers: Loopback[] = [];
after(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

async function serve(handler: Handler, path?: string): Promise<Loopback> {
  const s = await loopback(handler, path);
  servers.push(s);
  return s;
}

/** Every client socket this process opens (node's `net.client.socket` channel), in order. */
const clientSockets: Socket[] = [];
subscribe("net.client.socket", (message) => clientSockets.push((message as { socket: Socket }).socket));

/** The client sockets opened while `run` ran. */
async function socketsOpenedBy(run: () => Promise<void>): Promise<Socket[]> {
  const from = clientSockets.length;
  await run();
  return clientSockets.slice(from);
}

/** Resolves when every connection the server accepted has closed; fails if that takes STUCK_MS. */
async function allClosed(server: Loopback, what: string): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const stuck = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: a connection stayed open`)), STUCK_MS);
  });
  try {
    await Promise.race([server.allClosed(), stuck]);
  } finally {
    clearTimeout(timer);
  }
}

/** legacyHttp, except that tools/call is answered by `call`. */
function withCall(call: Handler): Handler {
  const legacy = legacyHttp();
  return (rec, res, req) => (rec.rpcMethod === "tools/call" ? call(rec, res, req) : legacy(rec, res, req));
}

describe("C5: the built-in client's connections belong to the transport", () => {
  test("C5: calls reuse a kept-alive connection, and close() closes every connection it opened", async () => {
    const server = await serve(legacyHttp());
    const sockets = await socketsOpenedBy(async () => {
      const client = await connect({ ...base, url: server.url });
      await client.callTool("echo", { text: "first" });
      const opened = server.connections().accepted;
      for (let i = 0; i < 10; i++) await client.callTool("echo", { text: `call ${i}` });
      assert.equal(server.connections().accepted, opened, "ten more sequential calls opened no connection");
      assert.ok(server.connections().open >= 1, "a connection is kept for the next request");
      await client.close();
    });
    assert.equal(server.count("DELETE"), 1, "the session was ended first, on a connection of ours");
    assert.ok(sockets.length >= 1);
    // Destroyed by close() itself, not left to an idle timer.
    for (const s of sockets) assert.equal(s.destroyed, true, "a socket of ours outlived close()");
    await allClosed(server, "after close()");
  });

  test("C5: a request right after a notification's 202 reuses its connection", async () => {
    // notifications/initialized is answered 202 and tools/list follows at once: the 202's
    // connection must be back in the pool by then, or every establishment pays a second one.
    const server = await serve(legacyHttp());
    const client = await connect({ ...base, url: server.url, prefetchTools: true });
    try {
      assert.deepEqual(
        server.requests.map((r) => r.rpcMethod ?? r.method),
        ["server/discover", "initialize", "notifications/initialized", "tools/list"],
      );
      assert.equal(server.connections().accepted, 1, "the establishment's four POSTs share one connection");
    } finally {
      await client.close();
    }
  });

  test("C5: the standalone GET stream goes out before the caller's first request", async () => {
    // A GET that arrives after a POST's reply stream could be read as that stream's resumption
    // (the conformance suite's sse-retry scenario reads it so): the order must not be left to
    // which connection happens to be free.
    const server = await serve(legacyHttp());
    const client = await connect({ ...base, url: server.url });
    try {
      await client.callTool("echo", { text: "first" });
      const order = server.requests.map((r) => r.rpcMethod ?? r.method);
      assert.ok(order.includes("GET"), "the stream was opened");
      assert.ok(order.indexOf("GET") < order.indexOf("tools/call"), `order: ${order.join(", ")}`);
    } finally {
      await client.close();
    }
  });

  test("C5: over HTTP+SSE, a POST right after a 202 reuses its connection", async () => {
    const server = await serve(legacySse({ kind: "working" }), "/sse");
    const client = await connect({ ...base, url: server.url, transport: "sse" });
    try {
      // initialized was the last POST; this call follows it at once (its error reply is fine).
      await client.callTool("echo", {}).catch(() => {});
      assert.deepEqual(
        server.requests.filter((r) => r.method === "POST").map((r) => r.rpcMethod),
        ["initialize", "notifications/initialized", "tools/call"],
      );
      assert.equal(server.connections().accepted, 2, "one connection for the stream, one for every POST");
    } finally {
      await client.close();
    }
  });

  test("C9: a failed connect leaves no connection open", async () => {
    const server = await serve(legacyHttp({ initialize: "http-500" }));
    const sockets = await socketsOpenedBy(async () => {
      await assert.rejects(connect({ ...base, url: server.url }), TetherError);
    });
    assert.ok(sockets.length >= 1);
    for (const s of sockets) assert.equal(s.destroyed, true, "a socket of ours outlived the failed connect");
    await allClosed(server, "after the failed connect");
  });

  test("C5: a pool that was closed sends nothing more", async () => {
    const server = await serve(legacyHttp());
    const pool = new NodeHttp();
    const answer = await pool.fetch(server.url, { method: "GET" });
    assert.equal(answer.status, 405);
    await answer.body?.cancel();
    pool.close();
    await allClosed(server, "after the pool closed");
    await assert.rejects(pool.fetch(server.url, { method: "GET" }), TypeError);
    assert.equal(server.requests.length, 1, "nothing was sent after close()");
  });
});

describe("P5: what arrives through the built-in client is bounded", () => {
  test("P5: a gzip-compressed reply is decoded, and the ceiling counts the bytes it decodes to", async () => {
    const big = "a".repeat(3 * 1024 * 1024);
    const server = await serve(
      withCall((rec, res) => {
        const text = (rec.rpcParams?.arguments as { text?: string } | undefined)?.text;
        const body = JSON.stringify(
          rpcResult(rec.rpcId, { content: [{ type: "text", text: text === "big" ? big : text }] }),
        );
        res.writeHead(200, { "content-type": "application/json", "content-encoding": "gzip" });
        res.end(gzipSync(body));
      }),
    );
    const client = await connect({ ...base, url: server.url, call: { maxResponseBytes: 1024 * 1024 } });
    try {
      const small = await client.callTool("echo", { text: "squeezed" });
      assert.deepEqual(small.content, [{ type: "text", text: "squeezed" }]);
      // About 3 KiB on the wire, 3 MiB once decoded: refused at the 1 MiB ceiling.
      const refused = await client.callTool("echo", { text: "big" }).then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.ok(refused instanceof TetherError, `a TetherError, got ${String(refused)}`);
      assert.equal(refused.reason, "response_too_large");
    } finally {
      await client.close();
    }
  });

  test("C5: a reply cut off mid-body is a connection failure of that call; the client survives it", async () => {
    const server = await serve(
      withCall((rec, res) => {
        if ((rec.rpcParams?.arguments as { text?: string } | undefined)?.text !== "cut") {
          return legacyHttp()(rec, res, res.req);
        }
        res.writeHead(200, { "content-type": "application/json", "content-length": "1000" });
        res.write('{"jsonrpc":"2.0","id":');
        setImmediate(() => res.socket?.destroy());
      }),
    );
    const client = await connect({ ...base, url: server.url });
    try {
      const failed = await client.callTool("echo", { text: "cut" }).then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.ok(failed instanceof TetherError, `a TetherError, got ${String(failed)}`);
      assert.equal(failed.code, "connection");
      const next = await client.callTool("echo", { text: "after" });
      assert.deepEqual(next.content, [{ type: "text", text: "after" }], "the next call goes through");
    } finally {
      await client.close();
    }
  });

  test("E4: aborting while a body arrives closes its connection at once", async () => {
    const server = await serve((_rec, res) => {
      openEventStream(res);
      res.write(": first\n\n");
    });
    const pool = new NodeHttp();
    const controller = new AbortController();
    const answer = await pool.fetch(server.url, { method: "GET", signal: controller.signal });
    const reader = answer.body!.getReader();
    const first = await reader.read();
    assert.equal(first.done, false);
    const pending = reader.read();
    controller.abort(new Error("caller gave up"));
    await assert.rejects(pending);
    await allClosed(server, "after the abort");
    pool.close();
  });

  test("C5: a signal aborted after its request finished leaves the next request on that socket alone", async () => {
    let release: (() => void) | undefined;
    const server = await serve((rec, res) => {
      if (rec.path === "/first") return void res.writeHead(200, { "content-type": "text/plain" }).end("done");
      openEventStream(res);
      res.write(": one\n\n");
      release = () => res.write(": two\n\n");
    });
    const pool = new NodeHttp();
    try {
      const first = new AbortController();
      const done = await pool.fetch(`${server.origin}/first`, { signal: first.signal });
      assert.equal(await done.text(), "done");
      // The socket goes back to the pool on the next turn; the stream below then reuses it.
      await new Promise<void>((resolve) => setImmediate(resolve));
      const stream = await pool.fetch(`${server.origin}/stream`, {});
      const reader = stream.body!.getReader();
      assert.equal((await reader.read()).done, false);
      assert.equal(server.connections().accepted, 1, "the stream reused the first request's socket");
      first.abort(new Error("the first caller gave up, long after its answer"));
      release!();
      const next = await reader.read();
      assert.equal(next.done, false, "the stream goes on");
      assert.match(new TextDecoder().decode(next.value), /two/);
    } finally {
      pool.close();
    }
  });

  test("S4: a header value that would split the request is refused before anything is sent", async () => {
    const server = await serve(legacyHttp());
    const pool = new NodeHttp();
    try {
      await assert.rejects(
        pool.fetch(server.url, { method: "POST", headers: { "x-note": "a\r\nx-injected: 1" }, body: "{}" }),
      );
      await assert.rejects(
        pool.fetch(new URL(server.url.replace("http://", "http://user:pw@")), {}),
        TypeError,
      );
      // A request that is sent after them arrives alone: neither refused one reached the server.
      const answer = await pool.fetch(server.url, { method: "GET" });
      await answer.body?.cancel();
      await until(() => server.requests.length >= 1, STUCK_MS, "the last request arrived");
      assert.equal(server.requests.length, 1);
      assert.equal(server.requests[0]!.headers["x-injected"], undefined);
    } finally {
      pool.close();
    }
  });
});
