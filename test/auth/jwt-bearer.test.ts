// Workload identity: the JWT-bearer grant (RFC 7523) with a workload's assertion, read afresh
// for each authorization; a refusal surfaces at once (no retry, no other grant), and the token
// request obeys the same fetch policy as every authorization request: no cross-origin redirect,
// a byte ceiling on the reply.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { connect, type LifecycleEvent, MemoryTokenStore } from "../../src/index.ts";
import {
  connectTo,
  es256,
  signJwt,
  startAuthServer,
  startProtectedServer,
  withProtectedServer,
} from "../helpers/auth-server.ts";
import { rejection } from "../helpers/failures.ts";
import { startHttp } from "../helpers/hostile.ts";

function workloadJwt(key: ReturnType<typeof es256>, audience: string, lifetime = 300): string {
  const now = Math.floor(Date.now() / 1000);
  return signJwt(
    {
      iss: "https://issuer.example",
      sub: "workload-CANARY-1",
      aud: audience,
      iat: now,
      exp: now + lifetime,
      jti: `j-${now}-${Math.random()}`,
    },
    key.privateKey,
  );
}

describe("auth: JWT-bearer grant (workload identity)", () => {
  test("X2: a workload assertion is exchanged for a token; the assertion never appears in events", async () => {
    const key = es256();
    await withProtectedServer({ workloadKey: key.publicJwk, registration: false }, {}, async (as, mcp) => {
      const events: LifecycleEvent[] = [];
      let reads = 0;
      const client = await connectTo(mcp, {
        onEvent: (e) => events.push(e),
        auth: {
          grant: "jwt_bearer",
          assertion: () => {
            reads++;
            return workloadJwt(key, as.origin);
          },
          tokenStore: new MemoryTokenStore(),
        },
      });
      try {
        await client.listTools();
      } finally {
        await client.close();
      }
      assert.equal(reads, 1, "the assertion was read when a token was needed");
      const grants = as.tokenRequests.map((f) => f.get("grant_type"));
      assert.deepEqual(grants, ["urn:ietf:params:oauth:grant-type:jwt-bearer"]);
      assert.equal(as.tokenRequests[0]!.get("resource"), mcp.url, "RFC 8707 resource");
      assert.equal(as.tokenRequests[0]!.get("client_id"), null, "no client named without a client ID");
      const text = JSON.stringify(events);
      for (const s of as.secrets) assert.ok(!text.includes(s));
    });
  });

  test("X2: a refused assertion (expired) fails unauthorized/invalid_grant after one token request, echo scrubbed", async () => {
    const key = es256();
    await withProtectedServer({ workloadKey: key.publicJwk, registration: false }, {}, async (as, mcp) => {
      const expired = workloadJwt(key, "", -60);
      const e = await rejection(
        connectTo(mcp, {
          auth: { grant: "jwt_bearer", clientId: "workload-app", assertion: expired, tokenStore: false },
        }),
      );
      assert.equal(e.code, "unauthorized");
      assert.equal(e.reason, "invalid_grant");
      assert.equal(as.tokenRequests.length, 1, "no retry and no other grant");
      const text = [e.message, JSON.stringify(e), String(e.cause)].join("\n");
      assert.ok(!text.includes(expired), "the assertion is not shown");
      assert.doesNotMatch(text, /CANARY/);
    });
  });

  test("S2: a token endpoint redirecting to another origin is refused and that origin receives nothing", async () => {
    const key = es256();
    const elsewhere = await startHttp((res) => {
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
    const as = await startAuthServer({
      workloadKey: key.publicJwk,
      registration: false,
      tokenRedirect: `${elsewhere.origin}/token`,
    });
    const mcp = await startProtectedServer(as);
    try {
      const e = await rejection(
        connectTo(mcp, {
          auth: { grant: "jwt_bearer", assertion: workloadJwt(key, as.origin), tokenStore: false },
        }),
      );
      assert.equal(elsewhere.requests.length, 0, "the other origin received nothing");
      assert.ok(!e.message.includes(elsewhere.origin), "the error names no URL");
      assert.ok(!e.message.includes("127.0.0.1"));
    } finally {
      await mcp.close();
      await as.close();
      await elsewhere.close();
    }
  });

  test("P5: an oversized token reply is refused at the authorization byte ceiling (limit)", async () => {
    const key = es256();
    await withProtectedServer(
      {
        workloadKey: key.publicJwk,
        registration: false,
        tokenBytes: 2 * 1024 * 1024,
      },
      {},
      async (as, mcp) => {
        const e = await rejection(
          connectTo(mcp, {
            auth: { grant: "jwt_bearer", assertion: workloadJwt(key, as.origin), tokenStore: false },
          }),
        );
        assert.equal(e.code, "limit");
        assert.equal(e.reason, "response_too_large");
      },
    );
  });

  test("P2: jwt_bearer without an assertion, or an assertion with another grant, is a config error", async () => {
    for (const auth of [
      { grant: "jwt_bearer" as const },
      { grant: "authorization_code" as const, assertion: "x.y.z" },
      { grant: "token_exchange" as const, assertion: "x.y.z" },
    ]) {
      const e = await rejection(connect({ url: "http://127.0.0.1:9/mcp", auth }));
      assert.equal(e.code, "config", JSON.stringify(auth));
    }
  });
});
