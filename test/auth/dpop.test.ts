// DPoP (RFC 9449): proofs on token requests, tokens bound to the client's key and presented with
// the DPoP scheme and a fresh proof per request, nonces at the token endpoint and at the MCP
// server (one retry each, bounded when a server never settles), and the key stored with the
// tokens as a secret.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { MemoryTokenStore } from "../../src/index.ts";
import {
  type AuthServer,
  browser,
  connectTo,
  protectedServerForSuite,
  storedTokens,
  withProtectedServer,
} from "../helpers/auth-server.ts";
import { rejection } from "../helpers/failures.ts";
import type { HostileServer } from "../helpers/hostile.ts";

function newProofs() {
  return { seen: [] as string[], errors: [] as string[], schemes: [] as string[] };
}

describe("auth: DPoP", () => {
  let as: AuthServer;
  let mcp: HostileServer;
  const proofs = newProofs();
  protectedServerForSuite((a, m) => ([as, mcp] = [a, m]), { dpop: {} }, { dpop: {}, proofs });

  test("X2: a DPoP-bound token is requested with a proof and presented as DPoP with a fresh proof per request", async () => {
    const store = new MemoryTokenStore();
    const client = await connectTo(mcp, {
      auth: { openUrl: browser(), tokenStore: store, dpop: true },
    });
    try {
      await client.listTools();
      await client.callTool("echo", { text: "x" });
    } finally {
      await client.close();
    }
    assert.ok(as.dpopProofs.length >= 1, "the token request carried a proof");
    assert.deepEqual(as.dpopErrors, []);
    const t = await storedTokens(store, mcp.url);
    assert.equal(t.tokenType, "DPoP");
    assert.equal(typeof t.dpopKey?.d, "string", "the private key is stored with the tokens");
    assert.ok(proofs.schemes.length >= 2);
    assert.ok(
      proofs.schemes.every((s) => s === "DPoP"),
      `every request used the DPoP scheme: ${proofs.schemes}`,
    );
    assert.deepEqual(proofs.errors, [], "every proof checked out (fresh jti, htm, htu, ath)");
    assert.equal(new Set(proofs.seen).size, proofs.seen.length, "no proof was sent twice");
  });

  test("X2: a stored DPoP key and token serve a later connection with no authorization traffic", async () => {
    const store = new MemoryTokenStore();
    await (
      await connectTo(mcp, {
        auth: { openUrl: browser(), tokenStore: store, dpop: true },
      })
    ).close();
    const tokenRequests = as.tokenRequests.length;
    const errors = proofs.errors.length;
    const client = await connectTo(mcp, {
      auth: { openUrl: () => assert.fail("no sign-in"), tokenStore: store, dpop: true },
    });
    try {
      await client.listTools();
    } finally {
      await client.close();
    }
    assert.equal(as.tokenRequests.length, tokenRequests, "nothing asked of the authorization server");
    assert.equal(proofs.errors.length, errors, "the stored key still signs valid proofs");
  });

  test("X2: without dpop the same servers issue and take Bearer tokens", async () => {
    const store = new MemoryTokenStore();
    const proofCount = as.dpopProofs.length;
    const client = await connectTo(mcp, {
      auth: { openUrl: browser(), tokenStore: store },
    });
    await client.close();
    assert.equal(as.dpopProofs.length, proofCount, "no proof sent");
    const t = await storedTokens(store, mcp.url);
    assert.equal(t.tokenType, undefined);
    assert.equal(t.dpopKey, undefined);
  });
});

describe("auth: DPoP nonces", () => {
  test("X4: a use_dpop_nonce answer at the token endpoint and at the MCP server is retried once with the nonce", async () => {
    const proofs = newProofs();
    await withProtectedServer(
      { dpop: { nonce: true } },
      { dpop: { nonce: true }, proofs },
      async (as, mcp) => {
        const client = await connectTo(mcp, {
          auth: { openUrl: browser(), tokenStore: new MemoryTokenStore(), dpop: true },
        });
        try {
          await client.listTools();
        } finally {
          await client.close();
        }
        assert.equal(
          as.dpopErrors.filter((e) => e === "nonce").length,
          1,
          "one nonce challenge at the token endpoint",
        );
        assert.equal(as.dpopProofs.length, 2, "the token request was sent again, once");
        assert.equal(
          proofs.errors.filter((e) => e === "nonce").length,
          1,
          "one nonce challenge at the MCP server",
        );
      },
    );
  });

  test("X4: a token endpoint that names a new nonce every time is given up on after one retry (unauthorized)", async () => {
    await withProtectedServer({ dpop: { nonceLoop: true } }, { dpop: {} }, async (as, mcp) => {
      const e = await rejection(
        connectTo(mcp, {
          auth: { openUrl: browser(), tokenStore: new MemoryTokenStore(), dpop: true },
        }),
      );
      assert.equal(e.code, "unauthorized");
      assert.equal(as.dpopProofs.length, 2, "two token requests, then no more");
    });
  });

  test("X4: an MCP server that names a new nonce every time is given up on after a bounded number of retries", async () => {
    const proofs = newProofs();
    await withProtectedServer({ dpop: {} }, { dpop: { nonceLoop: true }, proofs }, async (as, mcp) => {
      const e = await rejection(
        connectTo(mcp, {
          auth: { openUrl: browser(), tokenStore: new MemoryTokenStore(), dpop: true },
        }),
      );
      assert.equal(e.code, "unauthorized");
      assert.equal(e.reason, "token_rejected");
      assert.ok(proofs.seen.length <= 3, `at most three proofs for the request, saw ${proofs.seen.length}`);
      assert.equal(as.tokenRequests.length, 1, "no new sign-in for a nonce loop");
    });
  });
});
