// Step-up on 403 insufficient_scope, bounded; and client credentials with a secret and with a
// private-key JWT (the assertion verified by the authorization server with node:crypto).
import assert from "node:assert/strict";
import { generateKeyPairSync } from "node:crypto";
import { describe, test } from "node:test";
import { MemoryTokenStore } from "../../src/index.ts";
import {
  type AuthServer,
  browser,
  connectTo,
  protectedServerForSuite,
  withProtectedServer,
} from "../helpers/auth-server.ts";
import { rejection } from "../helpers/failures.ts";
import type { HostileServer } from "../helpers/hostile.ts";

describe("auth: step-up on insufficient_scope", () => {
  let as: AuthServer;
  let mcp: HostileServer;
  protectedServerForSuite(
    (a, m) => ([as, mcp] = [a, m]),
    {},
    { scopes: ["mcp:read"], callScopes: ["mcp:write"] },
  );

  test("auth: a 403 insufficient_scope re-authorizes with the union of scopes and the call goes through", async () => {
    const opened: string[] = [];
    const client = await connectTo(mcp, {
      auth: { openUrl: browser(opened), tokenStore: new MemoryTokenStore() },
    });
    try {
      const result = await client.callTool("echo", { text: "hi" });
      assert.deepEqual(result.content, [{ type: "text", text: "hi" }]);
    } finally {
      await client.close();
    }
    assert.equal(opened.length, 2, "signed in, then stepped up once");
    assert.equal(new URL(opened[0]!).searchParams.get("scope"), "mcp:read");
    assert.equal(new URL(opened[1]!).searchParams.get("scope"), "mcp:read mcp:write");
    assert.equal(
      mcp.requests.filter((r) => r.rpcMethod === "tools/call").length,
      2,
      "the call was sent again once, with the new token",
    );
  });

  test("auth: step-up is bounded: a scope never granted fails forbidden (insufficient_scope) after two tries", async () => {
    await withProtectedServer(
      { grantNoScopes: true },
      { callScopes: ["mcp:admin"] },
      async (_stingy, server) => {
        const opened: string[] = [];
        const client = await connectTo(server, {
          auth: { openUrl: browser(opened), tokenStore: false },
        });
        try {
          const e = await rejection(client.callTool("echo", { text: "x" }));
          assert.equal(e.code, "forbidden");
          assert.equal(e.reason, "insufficient_scope");
          assert.equal(e.stage, "call", "attributed to the call");
        } finally {
          await client.close();
        }
        assert.equal(opened.length, 3, "the sign-in, then two step-ups for the call, no more");
        assert.equal(server.requests.filter((r) => r.rpcMethod === "tools/call").length, 3);
      },
    );
  });

  test("auth: a challenge for scopes already granted is not chased: forbidden at once, no new sign-in", async () => {
    await withProtectedServer({}, { callScopes: ["mcp:write"] }, async (stubborn, server) => {
      // Whatever the token, the server keeps asking: simulate with a store whose token already has the scope.
      const opened: string[] = [];
      const client = await connectTo(server, {
        auth: { openUrl: browser(opened), tokenStore: false, scope: "mcp:write" },
      });
      try {
        // mcp:write was granted at sign-in, so a 403 asking for it again cannot be helped.
        for (const [token, issued] of stubborn.tokens) stubborn.tokens.set(token, { ...issued, scopes: [] });
        const e = await rejection(client.callTool("echo", { text: "x" }));
        assert.equal(e.code, "forbidden");
        assert.equal(e.reason, "insufficient_scope");
        assert.equal(e.httpStatus, 403);
        assert.equal(opened.length, 1, "no second sign-in");
      } finally {
        await client.close();
      }
    });
  });
});

describe("auth: client credentials", () => {
  test("auth: client_credentials with client_secret_basic, no browser, resource and scope sent", async () => {
    await withProtectedServer(
      { client: { id: "ci-bot", secret: "cs-CANARY-ci-secret" } },
      { scopes: ["mcp:read"] },
      async (as, mcp) => {
        const client = await connectTo(mcp, {
          auth: {
            grant: "client_credentials",
            clientId: "ci-bot",
            clientSecret: "cs-CANARY-ci-secret",
            tokenStore: false,
          },
        });
        await client.listTools();
        await client.close();
        assert.equal(as.count("/authorize"), 0);
        assert.equal(as.count("/register"), 0, "a pre-registered client");
        const form = as.tokenRequests[0]!;
        assert.equal(form.get("grant_type"), "client_credentials");
        assert.equal(form.get("scope"), "mcp:read");
        assert.equal(form.get("resource"), mcp.url);
        assert.equal(form.get("client_secret"), null, "basic, not in the body");
      },
    );
  });

  test("auth: client_credentials with private_key_jwt: the assertion verifies with the client's public key", async () => {
    const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
    await withProtectedServer(
      {
        client: { id: "jwt-bot", publicJwk: publicKey.export({ format: "jwk" }) },
      },
      {},
      async (as, mcp) => {
        const client = await connectTo(mcp, {
          auth: {
            grant: "client_credentials",
            clientId: "jwt-bot",
            privateKeyJwk: privateKey.export({ format: "jwk" }),
            tokenStore: false,
          },
        });
        await client.listTools();
        await client.close();
        const form = as.tokenRequests[0]!;
        assert.equal(
          form.get("client_assertion_type"),
          "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
        );
        assert.equal(form.get("client_assertion")?.split(".").length, 3);
        assert.ok(as.tokens.size > 0, "the server verified the assertion and issued a token");
      },
    );
  });

  test("auth: a wrong client secret is unauthorized (invalid_client), never retried", async () => {
    await withProtectedServer(
      { client: { id: "ci-bot", secret: "cs-CANARY-right" } },
      {},
      async (as, mcp) => {
        const e = await rejection(
          connectTo(mcp, {
            recovery: { maxAttempts: 3, backoffMs: 1 },
            auth: {
              grant: "client_credentials",
              clientId: "ci-bot",
              clientSecret: "cs-CANARY-wrong",
              tokenStore: false,
            },
          }),
        );
        assert.equal(e.code, "unauthorized");
        assert.equal(e.reason, "invalid_client");
        assert.equal(e.attempts, 1);
        assert.equal(as.count("/token"), 1);
      },
    );
  });
});
