// Refresh with rotation, and --stored-auth-only's promise: a missing or unusable token fails
// `unauthorized` at once, with no request to the authorization server and no browser.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { MemoryTokenStore, type ServerTokens, serverKey } from "../../src/index.ts";
import {
  type AuthServer,
  browser,
  connectTo,
  protectedServerForSuite,
  storedTokens,
} from "../helpers/auth-server.ts";
import { rejection } from "../helpers/failures.ts";
import { fakeClock } from "../helpers/fake-clock.ts";
import type { HostileServer } from "../helpers/hostile.ts";

describe("auth: refresh tokens", () => {
  let as: AuthServer;
  let mcp: HostileServer;
  protectedServerForSuite((a, m) => ([as, mcp] = [a, m]));

  /** Signs in once and marks the stored access token expired. */
  async function expiredStore(): Promise<{ store: MemoryTokenStore; first: ServerTokens }> {
    const store = new MemoryTokenStore();
    await (await connectTo(mcp, { auth: { openUrl: browser(), tokenStore: store } })).close();
    const first = await storedTokens(store, mcp.url);
    await store.set(serverKey(new URL(mcp.url)), { ...first, expiresAt: Date.now() - 1000 });
    return { store, first };
  }

  test("auth: an expired access token is refreshed before use and the refresh token rotated", async () => {
    const { store, first } = await expiredStore();
    assert.ok(first.refreshToken);
    const refreshesBefore = as.tokenRequests.filter((f) => f.get("grant_type") === "refresh_token").length;
    const mcpBefore = mcp.requests.length;
    const client = await connectTo(mcp, {
      auth: { openUrl: () => assert.fail("refreshing never sends the user"), tokenStore: store },
    });
    try {
      await client.listTools();
    } finally {
      await client.close();
    }
    const refreshes = as.tokenRequests
      .filter((f) => f.get("grant_type") === "refresh_token")
      .slice(refreshesBefore);
    assert.equal(refreshes.length, 1, "one refresh");
    assert.equal(refreshes[0]!.get("refresh_token"), first.refreshToken);
    assert.equal(refreshes[0]!.get("resource"), mcp.url, "RFC 8707 resource on refresh too");
    const second = await storedTokens(store, mcp.url);
    assert.notEqual(second.accessToken, first.accessToken, "a new access token");
    assert.notEqual(second.refreshToken, first.refreshToken, "the refresh token rotated");
    const sent = mcp.requests.slice(mcpBefore).filter((r) => r.method === "POST");
    assert.ok(sent.length > 0);
    for (const r of sent) assert.equal(r.headers.authorization, `Bearer ${second.accessToken}`);
    // The authorization server rotates: the old refresh token is spent.
    const reuse = await fetch(`${as.origin}/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        grant_type: "refresh_token",
        refresh_token: first.refreshToken!,
        client_id: first.clientId,
      }),
    });
    assert.equal(reuse.status, 400);
  });

  test("auth: stored-only refreshes a stored token without a browser", async () => {
    const { store } = await expiredStore();
    const authorizations = as.count("/authorize");
    const client = await connectTo(mcp, {
      auth: { mode: "stored-only", tokenStore: store },
    });
    await client.listTools();
    await client.close();
    assert.equal(as.count("/authorize"), authorizations);
  });

  test("auth: a refresh token the server no longer honours fails invalid_grant in stored-only mode", async () => {
    const { store, first } = await expiredStore();
    await store.set(serverKey(new URL(mcp.url)), {
      ...first,
      expiresAt: Date.now() - 1000,
      refreshToken: "rt-CANARY-revoked",
    });
    const e = await rejection(connectTo(mcp, { auth: { mode: "stored-only", tokenStore: store } }));
    assert.equal(e.code, "unauthorized");
    assert.equal(e.reason, "invalid_grant");
    assert.equal(await store.get(serverKey(new URL(mcp.url))), undefined, "the dead token is forgotten");
  });

  test("auth: in interactive mode a dead refresh token leads to a fresh sign-in", async () => {
    const { store, first } = await expiredStore();
    await store.set(serverKey(new URL(mcp.url)), {
      ...first,
      expiresAt: Date.now() - 1000,
      refreshToken: "rt-CANARY-revoked",
    });
    const authorizations = as.count("/authorize");
    const client = await connectTo(mcp, {
      auth: { openUrl: browser(), tokenStore: store },
    });
    await client.close();
    assert.equal(as.count("/authorize"), authorizations + 1);
  });
});

describe("auth: stored-only", () => {
  let as: AuthServer;
  let mcp: HostileServer;
  protectedServerForSuite((a, m) => ([as, mcp] = [a, m]), { refreshTokens: false, expiresIn: 5 });

  test("auth: with no stored token a 401 fails unauthorized at once, with no request to the authorization server", async () => {
    // A fake clock that never moves: failing at once means failing with no limit waited out.
    const clock = fakeClock();
    const e = await rejection(
      connectTo(mcp, {
        timeoutMs: 20_000,
        deps: { clock },
        auth: {
          mode: "stored-only",
          openUrl: () => assert.fail("never a browser"),
          tokenStore: new MemoryTokenStore(),
        },
      }),
    );
    assert.equal(e.code, "unauthorized");
    assert.equal(e.reason, "login_required");
    assert.equal(e.httpStatus, 401);
    assert.equal(as.server.requests.length, 0, "no network to the authorization server");
    assert.equal(
      mcp.requests.filter((r) => r.path.startsWith("/.well-known")).length,
      0,
      "not even metadata discovery",
    );
    assert.deepEqual(clock.fired(), [], "at once");
  });

  test("auth: an expired token that cannot be refreshed fails expired before anything is sent", async () => {
    const store = new MemoryTokenStore();
    await (await connectTo(mcp, { auth: { openUrl: browser(), tokenStore: store } })).close();
    const before = mcp.requests.length;
    const asBefore = as.server.requests.length;
    const e = await rejection(connectTo(mcp, { auth: { mode: "stored-only", tokenStore: store } }));
    assert.equal(e.code, "unauthorized");
    assert.equal(e.reason, "expired");
    assert.equal(mcp.requests.length, before, "nothing was sent to the server");
    assert.equal(as.server.requests.length, asBefore, "nor to the authorization server");
  });

  test("auth: mode off sends no token and the server's 401 stands (unauthorized, http_401)", async () => {
    const e = await rejection(connectTo(mcp, { auth: { mode: "off" } }));
    assert.equal(e.code, "unauthorized");
    assert.equal(e.reason, "http_401");
  });
});
