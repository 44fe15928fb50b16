// Sign-in with the authorization code grant and PKCE through the loopback redirect, against the
// local authorization server in test/helpers/auth-server.ts; the test plays the browser.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { type LifecycleEvent, MemoryTokenStore, serverKey } from "../../src/index.ts";
import {
  type AuthServer,
  browser,
  connectTo,
  protectedServerForSuite,
  withProtectedServer,
} from "../helpers/auth-server.ts";
import { rejection } from "../helpers/failures.ts";
import { fakeClock } from "../helpers/fake-clock.ts";
import type { HostileServer } from "../helpers/hostile.ts";

describe("auth: authorization code with PKCE through the loopback redirect", () => {
  let as: AuthServer;
  let mcp: HostileServer;
  protectedServerForSuite((a, m) => ([as, mcp] = [a, m]), {}, { scopes: ["mcp:read"] });

  test("auth: a 401 leads to discovery, registration and sign-in; the request is retried with the token", async () => {
    const opened: string[] = [];
    const store = new MemoryTokenStore();
    const client = await connectTo(mcp, {
      auth: { openUrl: browser(opened), tokenStore: store },
    });
    try {
      const tools = await client.listTools();
      assert.deepEqual(
        tools.map((t) => t.name),
        ["echo"],
      );
    } finally {
      await client.close();
    }
    assert.equal(opened.length, 1, "the user was sent once");
    const auth = new URL(opened[0]!);
    assert.equal(auth.searchParams.get("code_challenge_method"), "S256");
    assert.equal(auth.searchParams.get("scope"), "mcp:read", "the challenge's scope");
    assert.equal(auth.searchParams.get("resource"), mcp.url, "RFC 8707 resource: the server's URI");
    assert.match(auth.searchParams.get("redirect_uri") ?? "", /^http:\/\/127\.0\.0\.1:\d+\/callback$/);
    assert.equal(as.count("/register"), 1, "dynamic registration where no client is configured");
    const exchange = as.tokenRequests[0]!;
    assert.equal(exchange.get("grant_type"), "authorization_code");
    assert.equal(exchange.get("resource"), mcp.url);
    assert.ok(exchange.get("code_verifier"), "the verifier went with the code (the server checked S256)");
    const stored = await store.get(serverKey(new URL(mcp.url)));
    assert.equal(stored?.kind, "tokens");
    if (stored?.kind === "tokens") {
      assert.ok(as.tokens.has(stored.accessToken));
      assert.equal(stored.issuer, as.origin);
      assert.equal(stored.scope, "mcp:read");
    }
    for (const r of mcp.requests.filter((r) => r.rpcMethod && r.rpcMethod !== "server/discover"))
      assert.match(String(r.headers.authorization), /^Bearer at-CANARY-/, `${r.rpcMethod} carried the token`);
  });

  test("auth: a stored token is used at once: no challenge, no authorization server traffic", async () => {
    const store = new MemoryTokenStore();
    const first = await connectTo(mcp, {
      auth: { openUrl: browser(), tokenStore: store },
    });
    await first.close();
    const asRequests = as.server.requests.length;
    const mcpRequests = mcp.requests.length;
    const second = await connectTo(mcp, {
      auth: { openUrl: () => assert.fail("no sign-in"), tokenStore: store, mode: "stored-only" },
    });
    await second.listTools();
    await second.close();
    assert.equal(as.server.requests.length, asRequests, "nothing went to the authorization server");
    assert.ok(
      mcp.requests.slice(mcpRequests).every((r) => r.method !== "POST" || r.headers.authorization),
      "every POST carried the stored token from the start",
    );
  });

  test("auth: a redirect with the wrong state is refused (state_mismatch) and the code never exchanged", async () => {
    await withProtectedServer({ wrongState: true }, {}, async (wrong, server) => {
      const e = await rejection(connectTo(server, { auth: { openUrl: browser(), tokenStore: false } }));
      assert.equal(e.code, "unauthorized");
      assert.equal(e.reason, "state_mismatch");
      assert.equal(wrong.count("/token"), 0, "the code was not exchanged");
    });
  });

  test("auth: a denied authorization is forbidden (denied), a security failure", async () => {
    await withProtectedServer({ deny: true }, {}, async (_deny, server) => {
      const e = await rejection(connectTo(server, { auth: { openUrl: browser(), tokenStore: false } }));
      assert.equal(e.code, "forbidden");
      assert.equal(e.reason, "denied");
      assert.equal(e.security, true);
    });
  });

  test("auth: a hook that cannot send the user ends the wait at once (login_required)", async () => {
    // A fake clock that never moves: ending at once means ending with no limit waited out.
    const clock = fakeClock();
    const e = await rejection(
      connectTo(mcp, {
        timeoutMs: 10_000,
        deps: { clock },
        auth: {
          openUrl: () => Promise.reject(new Error("no browser here")),
          tokenStore: false,
        },
      }),
    );
    assert.equal(e.reason, "login_required");
    assert.deepEqual(clock.fired(), [], "did not wait for the deadline");
  });

  test("R4, N5: an authorization failure is never retried by recovery and is never era evidence", async () => {
    await withProtectedServer({ deny: true }, {}, async (_deny, server) => {
      const events: LifecycleEvent[] = [];
      const e = await rejection(
        connectTo(server, {
          recovery: { maxAttempts: 3, backoffMs: 1 },
          onEvent: (ev) => events.push(ev),
          auth: { openUrl: browser(), tokenStore: false },
        }),
      );
      assert.equal(e.code, "forbidden");
      assert.equal(e.attempts, 1, "one attempt: vetoed");
      assert.ok(e.recoveryStopped && e.recoveryStopped !== "max_attempts");
      assert.equal(events.filter((ev) => ev.type === "era_evidence").length, 0, "no era evidence from auth");
      assert.equal(
        server.requests.filter((r) => r.method === "GET" && r.path === "/mcp").length,
        0,
        "no fall-back to HTTP+SSE after a 401",
      );
    });
  });
});
