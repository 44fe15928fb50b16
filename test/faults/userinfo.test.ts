// URL userinfo (CONTRACT S4, X2): `http://user:password@host/mcp` is sent as
// `Authorization: Basic` (the way curl sends it), the URL fetched carries no credentials, and
// neither part appears in any output: errors, events, --debug, --json. An Authorization header or
// OAuth beside it is a config error that names the conflict. The server records what it got.

import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import { type ConnectOptions, connect, type LifecycleEvent, TetherError } from "../../src/index.ts";
import { errorRecord, runCli } from "../helpers/cli.ts";
import {
  type HostileServer,
  json,
  legacyStreamableHandler,
  rpcError,
  startHttp,
} from "../helpers/hostile.ts";

const USER = "alice-CANARY-u7";
/** Decoded password: `@` and `:` in it must survive percent-encoding in the URL. */
const PASSWORD = "pw-CANARY-3e9@1:x";
const ENCODED_PASSWORD = encodeURIComponent(PASSWORD);
const BASIC = Buffer.from(`${USER}:${PASSWORD}`, "utf8").toString("base64");
const CANARIES = [USER, PASSWORD, ENCODED_PASSWORD, BASIC, "CANARY"];

const base = { eraHints: false, listen: false, timeoutMs: 10_000 } as const satisfies Partial<ConnectOptions>;

const servers: HostileServer[] = [];
after(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

/** A legacy server whose tools/call error echoes the Authorization header it received. */
async function server(): Promise<HostileServer> {
  const s = await startHttp(
    legacyStreamableHandler({
      "tools/call": (res, rec, req) =>
        json(
          200,
          rpcError(
            rec.rpcId,
            -32000,
            `denied for ${String(rec.headers.authorization)}; user ${USER} pw ${PASSWORD}`,
          ),
        )(res, rec, req),
    }),
  );
  servers.push(s);
  return s;
}

function withUserinfo(url: string, user = USER, password = ENCODED_PASSWORD): string {
  const u = new URL(url);
  return `${u.protocol}//${user}:${password}@${u.host}${u.pathname}`;
}

function assertNoCanary(text: string, where: string): void {
  for (const c of CANARIES) assert.ok(!text.includes(c), `${where} contains ${c}: ${text}`);
}

async function failure(run: () => Promise<unknown>): Promise<TetherError> {
  try {
    await run();
  } catch (error) {
    assert.ok(error instanceof TetherError, `a TetherError, got ${String(error)}`);
    return error;
  }
  assert.fail("expected a failure");
}

describe("S4: URL userinfo in the library", () => {
  test("S4: URL userinfo is sent as Authorization: Basic on every request, never in the URL", async () => {
    const mcp = await server();
    const events: LifecycleEvent[] = [];
    const client = await connect({ ...base, url: withUserinfo(mcp.url), onEvent: (e) => events.push(e) });
    try {
      await client.listTools();
    } finally {
      await client.close();
    }
    assert.ok(mcp.requests.length >= 3);
    for (const r of mcp.requests) {
      assert.equal(r.headers.authorization, `Basic ${BASIC}`, `${r.method} ${r.rpcMethod ?? ""}`);
      assertNoCanary(r.path, "the request path");
    }
    assertNoCanary(JSON.stringify(events), "events");
  });

  test("X2: a server that echoes the Basic credentials gets them redacted from the error", async () => {
    const mcp = await server();
    const client = await connect({ ...base, url: withUserinfo(mcp.url) });
    try {
      const e = await failure(() => client.callTool("echo", { text: "hi" }));
      assert.equal(e.code, "remote_error");
      assert.ok(e.rpcMessage?.includes("[redacted]"), e.rpcMessage);
      assertNoCanary([e.message, e.rpcMessage, JSON.stringify(e)].join("\n"), "the error");
    } finally {
      await client.close();
    }
  });

  test("S4: URL userinfo with an Authorization header is a config error naming the conflict; nothing is sent", async () => {
    const mcp = await server();
    for (const name of ["authorization", "Authorization"]) {
      const e = await failure(() =>
        connect({ ...base, url: withUserinfo(mcp.url), headers: { [name]: "Bearer tok-CANARY-h" } }),
      );
      assert.equal(e.code, "config");
      assert.equal(e.reason, "conflicting_options");
      assert.match(e.message, /URL credentials.*Authorization header/);
      assertNoCanary(JSON.stringify(e), "the error");
    }
    assert.equal(mcp.requests.length, 0);
  });

  test("S4: URL userinfo with auth (OAuth) is a config error; auth off is fine", async () => {
    const mcp = await server();
    const e = await failure(() =>
      connect({ ...base, url: withUserinfo(mcp.url), auth: { clientId: "x", clientSecret: "cs-CANARY-1" } }),
    );
    assert.equal(e.code, "config");
    assert.equal(e.reason, "conflicting_options");
    assert.match(e.message, /URL credentials.*auth/);
    assertNoCanary(JSON.stringify(e), "the error");
    assert.equal(mcp.requests.length, 0);
    const client = await connect({ ...base, url: withUserinfo(mcp.url), auth: { mode: "off" } });
    await client.close();
    assert.equal(mcp.requests[0]?.headers.authorization, `Basic ${BASIC}`);
  });

  test("S4: userinfo that cannot be Basic credentials is a config error, not an internal one", async () => {
    const mcp = await server();
    for (const [user, password] of [
      [USER, "bad%zz-CANARY"],
      ["a%3Ab-CANARY", "pw"],
    ] as const) {
      const e = await failure(() => connect({ ...base, url: withUserinfo(mcp.url, user, password) }));
      assert.equal(e.code, "config", e.message);
      assert.equal(e.reason, "invalid_target");
      assertNoCanary(JSON.stringify(e), "the error");
    }
    assert.equal(mcp.requests.length, 0);
  });
});

describe("S4: URL userinfo in the CLI", () => {
  test("S4: tether tools with userinfo and no flags works (no OAuth, no config error) and prints no credential", async () => {
    const mcp = await server();
    const run = await runCli(["tools", withUserinfo(mcp.url), "--json", "--events", "--debug"]);
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(
      (JSON.parse(run.stdout) as { tools: { name: string }[] }).tools.map((t) => t.name),
      ["echo"],
    );
    assertNoCanary(run.stdout, "stdout");
    assertNoCanary(run.stderr, "stderr");
    assert.ok(mcp.requests.length > 0);
    for (const r of mcp.requests) assert.equal(r.headers.authorization, `Basic ${BASIC}`);
  });

  test("S4: K1: a server echoing the credentials: the error record and --debug causes are redacted", async () => {
    const mcp = await server();
    const run = await runCli(["call", withUserinfo(mcp.url), "echo", "text=hi", "--events", "--debug"]);
    assert.equal(run.code, 7, run.stderr);
    const record = errorRecord(run);
    assert.equal(record.code, "remote_error");
    assertNoCanary(run.stdout, "stdout");
    assertNoCanary(run.stderr, "stderr");
  });

  test("S4: K1: userinfo with -H Authorization is one config record, exit 2, nothing sent", async () => {
    const mcp = await server();
    const run = await runCli(["tools", withUserinfo(mcp.url), "-H", "Authorization: Bearer tok-CANARY-h"]);
    assert.equal(run.code, 2, run.stderr);
    const record = errorRecord(run);
    assert.equal(record.code, "config");
    assert.equal(record.reason, "conflicting_options");
    assertNoCanary(run.stderr, "stderr");
    assert.equal(mcp.requests.length, 0);
  });
});
