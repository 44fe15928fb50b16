// Redirects (CONTRACT S2, X2): an MCP or OAuth URL that answers 3xx. Two real servers on
// 127.0.0.1 port 0 are two origins; "localhost" against "127.0.0.1" on the same port is a third
// case. The other origin is a sink that counts every connection it accepts: a redirect we refuse
// is never followed, so the sink must see no connection at all. Every request carries a canary
// bearer token (and calls a canary argument); no error output may contain it or either address.

import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { after, before, beforeEach, describe, test } from "node:test";
import { type Client, type ConnectOptions, connect, TetherError } from "../../src/index.ts";
import { MAX_REDIRECTS } from "../../src/transport/fetch-policy.ts";
import { errorRecord, runCli } from "../helpers/cli.ts";
import { eventually } from "../helpers/deadline-servers.ts";
import {
  type Handler,
  HOSTILE_SESSION_ID,
  type HostileServer,
  hostileSet,
  legacySseHandler,
  legacyStreamableHandler,
} from "../helpers/hostile.ts";

const CANARY_TOKEN = "tok-CANARY-7d41c2e9b0";
const CANARY_ARG = "arg-CANARY-55e1a0";
const CANARY_SECRET = "cs-CANARY-9f2b7e31";
const base = {
  eraHints: false,
  listen: false,
  timeoutMs: 10_000,
  headers: { authorization: `Bearer ${CANARY_TOKEN}` },
} as const satisfies Partial<ConnectOptions>;

// ---------------------------------------------------------------- the other origin

interface Sink {
  url: string;
  origin: string;
  port: number;
  /** Connections accepted: any at all means something of ours reached it. */
  connections: number;
  requests: number;
  close(): Promise<void>;
}

/** The other origin: records every connection and request, answers 500. */
async function startSink(): Promise<Sink> {
  const sockets = new Set<Socket>();
  const sink = { connections: 0, requests: 0 } as Sink;
  const server = createServer((_req, res) => {
    sink.requests++;
    res.writeHead(500).end();
  });
  server.on("connection", (socket) => {
    sink.connections++;
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  sink.port = port;
  sink.origin = `http://127.0.0.1:${port}`;
  sink.url = `${sink.origin}/mcp`;
  sink.close = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      for (const s of sockets) s.destroy();
    });
  return sink;
}

// ---------------------------------------------------------------- fixtures

const kept = hostileSet();
let sink: Sink;
before(async () => {
  sink = await startSink();
});
beforeEach(() => {
  // Each test answers for its own requests: a failure in one does not show up in the next.
  sink.connections = 0;
  sink.requests = 0;
});
after(async () => {
  await kept.closeAll();
  await sink.close();
});

const http = (handler: Handler, path?: string) => kept.http(handler, { path });

function redirect(status: number, location: string | undefined): Handler {
  return (res) => {
    res.writeHead(status, location === undefined ? {} : { location, "content-type": "text/plain" });
    res.end("moved");
  };
}

async function failure(run: () => Promise<unknown>): Promise<TetherError> {
  try {
    const value = await run();
    if (value && typeof (value as Client).close === "function") await (value as Client).close();
  } catch (error) {
    assert.ok(error instanceof TetherError, `a TetherError, got ${String(error)}`);
    return error;
  }
  assert.fail("expected a failure");
}

/** The error's public face carries neither address, no canary and no port of either server. */
function assertClean(e: TetherError, ...ports: number[]): void {
  const exposed = [e.message, JSON.stringify(e), JSON.stringify(e.toJSON())].join("\n");
  for (const secret of [CANARY_TOKEN, CANARY_ARG, CANARY_SECRET, "http://", "localhost", "127.0.0.1"])
    assert.ok(!exposed.includes(secret), `error output contains ${secret}: ${exposed}`);
  for (const port of ports) assert.ok(!exposed.includes(String(port)), `error output names port ${port}`);
}

function assertRefused(e: TetherError, reason = "redirect_refused"): void {
  assert.equal(e.code, "connection");
  assert.equal(e.reason, reason);
  assert.equal(e.security, true, "never retried");
}

/** The sink saw nothing. Read after the client finished, so anything sent would have arrived. */
function assertSinkUntouched(): void {
  assert.equal(sink.connections, 0, "the other origin accepted a connection");
  assert.equal(sink.requests, 0, "the other origin received a request");
}

const portOf = (s: { origin: string }) => Number(new URL(s.origin).port);

// ---------------------------------------------------------------- Streamable HTTP

describe("S2: Streamable HTTP redirects", () => {
  for (const status of [307, 308]) {
    test(`S2: a cross-origin ${status} on the initialize POST is refused and the other origin receives nothing`, async () => {
      const mcp = await http(redirect(status, sink.url));
      const e = await failure(() =>
        connect({ ...base, url: mcp.url, transport: "streamable-http", maxProtocolVersion: "2025-11-25" }),
      );
      assertRefused(e);
      assert.equal(e.httpStatus, status);
      assert.equal(e.stage, "http_request");
      assert.deepEqual(mcp.rpcMethods(), ["initialize"], "one request, not retried");
      assertSinkUntouched();
      assertClean(e, portOf(mcp), sink.port);
    });
  }

  test("S2: localhost and 127.0.0.1 are different origins: a 308 between them is refused", async () => {
    // The target is the same server under another host name: it would answer, so any request
    // beyond the first one shows the redirect was followed.
    let port = 0;
    const mcp = await http((res, rec, req) => redirect(308, `http://localhost:${port}/mcp`)(res, rec, req));
    port = portOf(mcp);
    const e = await failure(() => connect({ ...base, url: mcp.url, transport: "streamable-http" }));
    assertRefused(e);
    assert.equal(mcp.requests.length, 1, "the redirect to localhost was not followed");
    assertClean(e, port);
  });

  test("S2: a cross-origin 307 on tools/call after establishment is refused; the call's arguments go nowhere", async () => {
    const mcp = await http(legacyStreamableHandler({ "tools/call": redirect(307, sink.url) }));
    const client = await connect({ ...base, url: mcp.url, transport: "streamable-http" });
    kept.client(client);
    const e = await failure(() => client.callTool("echo", { text: CANARY_ARG }));
    assertRefused(e);
    assert.equal(e.phase, "call");
    // The client is still usable: the refusal is about that one request.
    assert.deepEqual(await client.listTools().then((t) => t.map((x) => x.name)), ["echo"]);
    await client.close();
    assertSinkUntouched();
    assertClean(e, portOf(mcp), sink.port);
  });

  test("S2: a cross-origin 307 on the optional GET stream (listen) is refused; requests carry on", async () => {
    const mcp = await http(legacyStreamableHandler({ GET: redirect(307, sink.url) }));
    const client = await connect({ ...base, url: mcp.url, transport: "streamable-http", listen: true });
    kept.client(client);
    assert.ok(
      await eventually(() => mcp.requests.some((r) => r.method === "GET"), 5_000),
      "the GET stream was asked for",
    );
    const result = await client.callTool("echo", { text: "still here" });
    assert.deepEqual(result.content, [{ type: "text", text: "still here" }]);
    await client.close();
    assertSinkUntouched();
  });

  test("S2: a same-origin 307 to another path is followed with the same headers and body", async () => {
    const inner = legacyStreamableHandler();
    const mcp = await http(async (res, rec, req) => {
      if (rec.path === "/mcp") return redirect(307, "/v2/mcp")(res, rec, req);
      return await inner(res, rec, req);
    });
    const client = await connect({ ...base, url: mcp.url, transport: "streamable-http" });
    kept.client(client);
    const result = await client.callTool("echo", { text: CANARY_ARG });
    assert.deepEqual(result.content, [{ type: "text", text: CANARY_ARG }]);
    await client.close();
    const firsts = mcp.requests.filter((r) => r.path === "/mcp" && r.method === "POST");
    assert.ok(firsts.length >= 3, "initialize, initialized, tools/call at least");
    for (const first of firsts) {
      const i = mcp.requests.indexOf(first);
      const followed = mcp.requests[i + 1];
      assert.equal(followed?.path, "/v2/mcp", "the redirect was followed");
      assert.equal(followed.method, "POST", "method kept");
      assert.equal(followed.rawBody, first.rawBody, "body kept");
      assert.equal(followed.headers.authorization, `Bearer ${CANARY_TOKEN}`, "headers kept");
      assert.equal(followed.headers["content-type"], "application/json");
    }
    const call = mcp.requests.find((r) => r.path === "/v2/mcp" && r.rpcMethod === "tools/call");
    assert.equal(call?.headers["mcp-session-id"], HOSTILE_SESSION_ID, "session header kept");
  });

  test(`S2: a redirect loop is refused after ${MAX_REDIRECTS} same-origin hops`, async () => {
    const mcp = await http(redirect(307, "/mcp"));
    const e = await failure(() =>
      connect({ ...base, url: mcp.url, transport: "streamable-http", maxProtocolVersion: "2025-11-25" }),
    );
    assertRefused(e, "too_many_redirects");
    assert.equal(mcp.requests.length, MAX_REDIRECTS + 1, "the first request and each followed hop");
    assertClean(e, portOf(mcp));
  });

  const targets: [string, string | undefined][] = [
    ["file:///etc/passwd", "file:///etc/passwd"],
    ["javascript:", "javascript:alert(document.cookie)"],
    ["data:", "data:text/plain,hello"],
    ["no Location", undefined],
    ["an invalid Location", "http://[::1"],
    ["credentials in the Location", "/mcp2"],
  ];
  for (const [name, location] of targets) {
    test(`S2: a redirect to ${name} is refused`, async () => {
      let port = 0;
      const mcp = await http((res, rec, req) =>
        redirect(
          307,
          name.startsWith("credentials") ? `http://user:${CANARY_SECRET}@127.0.0.1:${port}/mcp2` : location,
        )(res, rec, req),
      );
      port = portOf(mcp);
      const e = await failure(() => connect({ ...base, url: mcp.url, transport: "streamable-http" }));
      assertRefused(e);
      assert.equal(mcp.requests.length, 1, "nothing followed");
      assertClean(e, port);
      if (location) assert.ok(!JSON.stringify(e).includes(location));
    });
  }

  test("S2: a same-origin 303 on a POST is refused rather than resent as a GET without its body", async () => {
    const mcp = await http(redirect(303, "/elsewhere"));
    const e = await failure(() =>
      connect({ ...base, url: mcp.url, transport: "streamable-http", maxProtocolVersion: "2025-11-25" }),
    );
    assertRefused(e);
    assert.equal(e.httpStatus, 303);
    assert.equal(mcp.requests.length, 1);
  });

  test("S2: a caller's own fetch is asked for redirect manual, and its 307 is refused", async () => {
    const asked: RequestInit["redirect"][] = [];
    const mcp = await http(redirect(307, sink.url));
    const e = await failure(() =>
      connect({
        ...base,
        url: mcp.url,
        transport: "streamable-http",
        deps: {
          fetch: (input, init) => {
            asked.push(init?.redirect);
            return fetch(input, init);
          },
        },
      }),
    );
    assertRefused(e);
    assert.ok(asked.length > 0 && asked.every((r) => r === "manual"), `redirect modes: ${asked.join()}`);
    assertSinkUntouched();
  });
});

// ---------------------------------------------------------------- legacy HTTP+SSE

describe("S2: legacy HTTP+SSE redirects", () => {
  test("S2: a cross-origin 307 on the SSE GET is refused at the endpoint stage", async () => {
    const mcp = await http(redirect(307, `${sink.origin}/sse`), "/sse");
    const e = await failure(() => connect({ ...base, url: mcp.url, transport: "sse" }));
    assertRefused(e);
    assert.equal(e.stage, "sse_endpoint");
    assertSinkUntouched();
    assertClean(e, portOf(mcp), sink.port);
  });

  test("S2: a cross-origin 307 on the endpoint POST is refused; initialize goes nowhere", async () => {
    const inner = legacySseHandler();
    const mcp = await http(async (res, rec, req) => {
      if (rec.method === "POST" && rec.path.startsWith("/messages"))
        return redirect(307, `${sink.origin}/messages`)(res, rec, req);
      return await inner(res, rec, req);
    }, "/sse");
    const e = await failure(() => connect({ ...base, url: mcp.url, transport: "sse" }));
    assertRefused(e);
    assert.equal(
      mcp.requests.filter((r) => r.method === "POST").length,
      1,
      "the initialize POST, not followed",
    );
    assertSinkUntouched();
    assertClean(e, portOf(mcp), sink.port);
  });

  test("S2: a same-origin 302 on the SSE GET is followed (a GET stays a GET)", async () => {
    const inner = legacySseHandler();
    const mcp = await http(async (res, rec, req) => {
      if (rec.path === "/old-sse") return redirect(302, "/sse")(res, rec, req);
      return await inner(res, rec, req);
    }, "/old-sse");
    const client = await connect({ ...base, url: mcp.url, transport: "sse" });
    kept.client(client);
    assert.deepEqual(await client.callTool("echo", { text: "via 302" }).then((r) => r.content), [
      { type: "text", text: "via 302" },
    ]);
    await client.close();
    const get = mcp.requests.find((r) => r.path === "/sse");
    assert.equal(get?.headers.authorization, `Bearer ${CANARY_TOKEN}`);
  });
});

// ---------------------------------------------------------------- OAuth

/**
 * A protected MCP server that is its own authorization server: 401 with resource metadata, the
 * metadata documents, and a token endpoint. `metadata` / `token` say which of them redirects where.
 */
async function oauthServer(redirects: { metadata?: string; token?: string }): Promise<HostileServer> {
  let origin = "";
  const issued = "at-CANARY-issued-4c1d";
  const inner = legacyStreamableHandler();
  const send = (res: Parameters<Handler>[0], status: number, body: unknown, headers = {}) => {
    res.writeHead(status, { "content-type": "application/json", ...headers }).end(JSON.stringify(body));
  };
  return await http(async (res, rec, req) => {
    const path = rec.path;
    if (path === "/.well-known/oauth-protected-resource/mcp") {
      if (redirects.metadata) return redirect(307, redirects.metadata)(res, rec, req);
      return send(res, 200, { resource: `${origin}/mcp`, authorization_servers: [origin] });
    }
    if (path === "/.well-known/oauth-authorization-server")
      return send(res, 200, {
        issuer: origin,
        authorization_endpoint: `${origin}/authorize`,
        token_endpoint: `${origin}/token`,
        response_types_supported: ["code"],
        grant_types_supported: ["client_credentials"],
        code_challenge_methods_supported: ["S256"],
        token_endpoint_auth_methods_supported: ["client_secret_basic"],
      });
    if (path.startsWith("/.well-known/")) return send(res, 404, { error: "not_found" });
    if (path === "/token") {
      if (redirects.token) return redirect(307, redirects.token)(res, rec, req);
    }
    if (path === "/token" || path === "/token-real")
      return send(res, 200, { access_token: issued, token_type: "Bearer", expires_in: 3600 });
    if (rec.headers.authorization !== `Bearer ${issued}`)
      return send(
        res,
        401,
        { error: "invalid_token" },
        {
          "www-authenticate": `Bearer resource_metadata="${origin}/.well-known/oauth-protected-resource/mcp"`,
        },
      );
    return await inner(res, rec, req);
  }).then((s) => {
    origin = s.origin;
    return s;
  });
}

const oauthOptions = (url: string): ConnectOptions => ({
  eraHints: false,
  listen: false,
  timeoutMs: 10_000,
  url,
  transport: "streamable-http",
  auth: { grant: "client_credentials", clientId: "bot", clientSecret: CANARY_SECRET, tokenStore: false },
});

describe("S2: OAuth redirects", () => {
  test("S2: a cross-origin 307 on the protected-resource metadata is refused", async () => {
    const mcp = await oauthServer({ metadata: `${sink.origin}/.well-known/oauth-protected-resource` });
    const e = await failure(() => connect(oauthOptions(mcp.url)));
    assertRefused(e);
    assertSinkUntouched();
    assertClean(e, portOf(mcp), sink.port);
  });

  test("S2: a cross-origin 307 on the token endpoint is refused; the client secret goes nowhere", async () => {
    const mcp = await oauthServer({ token: `${sink.origin}/token` });
    const e = await failure(() => connect(oauthOptions(mcp.url)));
    assertRefused(e);
    assert.equal(mcp.requests.filter((r) => r.path === "/token").length, 1);
    assertSinkUntouched();
    assertClean(e, portOf(mcp), sink.port);
  });

  test("S2: a same-origin 307 on the token endpoint is followed with its form body", async () => {
    const mcp = await oauthServer({ token: "/token-real" });
    const client = await connect(oauthOptions(mcp.url));
    kept.client(client);
    await client.listTools();
    await client.close();
    const [first, followed] = mcp.requests.filter((r) => r.path.startsWith("/token"));
    assert.equal(followed?.path, "/token-real");
    assert.equal(followed.method, "POST");
    assert.equal(followed.rawBody, first?.rawBody);
    assert.match(followed.rawBody, /grant_type=client_credentials/);
    assert.equal(followed.headers.authorization, first?.headers.authorization, "client authentication kept");
  });
});

// ---------------------------------------------------------------- the CLI

describe("S2: the CLI", () => {
  test("S2: K1: a cross-origin redirect is one error record on stderr and exit 3", async () => {
    const mcp = await http(redirect(307, sink.url));
    const run = await runCli(
      [
        "tools",
        mcp.url,
        "--transport",
        "streamable-http",
        "--bearer-env",
        "REDIRECT_TOKEN",
        "--events",
        "--debug",
      ],
      { env: { REDIRECT_TOKEN: CANARY_TOKEN } },
    );
    assert.equal(run.code, 3, run.stderr);
    assert.equal(run.stdout, "");
    const record = errorRecord(run);
    assert.equal(record.type, "error");
    assert.equal(record.code, "connection");
    assert.equal(record.reason, "redirect_refused");
    assert.equal(record.httpStatus, 307);
    for (const secret of [CANARY_TOKEN, sink.origin, String(sink.port), mcp.origin])
      assert.ok(!run.stderr.includes(secret), `stderr contains ${secret}`);
    assertSinkUntouched();
  });
});
