// Credential canaries: access and refresh tokens, codes, verifiers, client secrets and assertion
// JWTs appear in no error, no event and no CLI output, even when servers echo them back.
import assert from "node:assert/strict";
import { generateKeyPairSync } from "node:crypto";
import { describe, test } from "node:test";
import { type LifecycleEvent, MemoryTokenStore, type TetherError } from "../../src/index.ts";
import { type AuthServer, browser, connectTo, withProtectedServer } from "../helpers/auth-server.ts";
import { rejection as failure } from "../helpers/failures.ts";

/** Everything a failure exposes outside the process: message, record, tool result, each later failure. */
function exposed(error: TetherError, events: LifecycleEvent[]): string {
  return [
    error.message,
    String(error),
    JSON.stringify(error),
    JSON.stringify(error.toToolResult()),
    ...error.laterFailures.map((f) => JSON.stringify(f)),
    JSON.stringify(events),
  ].join("\n");
}

function assertClean(text: string, as: AuthServer, extra: string[] = []): void {
  const secrets = [...as.secrets, ...extra];
  assert.ok(secrets.length > 0, "the servers issued and saw secrets");
  for (const secret of secrets)
    assert.ok(!text.includes(secret), `leaked ${secret.slice(0, 12)}… in: ${text}`);
  assert.doesNotMatch(text, /CANARY/);
}

describe("X2: credential canaries in errors and events", () => {
  test("X2: a server echoing the bearer token in its error: tokens, code, verifier and client secret stay hidden", async () => {
    const secret = "cs-CANARY-preregistered-secret";
    await withProtectedServer(
      { client: { id: "app", secret } },
      { echoAuthorization: true },
      async (as, mcp) => {
        const events: LifecycleEvent[] = [];
        const client = await connectTo(mcp, {
          onEvent: (e) => events.push(e),
          auth: {
            clientId: "app",
            clientSecret: secret,
            openUrl: browser(),
            tokenStore: new MemoryTokenStore(),
          },
        });
        try {
          const e = await failure(client.callTool("echo", { text: "x" }));
          assert.equal(e.code, "remote_error");
          assert.match(e.rpcMessage ?? "", /\[redacted\]/, "the echo was there, and scrubbed");
          assertClean(exposed(e, events), as, [secret]);
        } finally {
          await client.close();
        }
        assert.ok(as.tokenRequests[0]?.get("code_verifier"), "a verifier was sent");
      },
    );
  });

  test("X2: a token endpoint echoing the code and verifier in its refusal: neither appears", async () => {
    await withProtectedServer({ rejectCodes: true }, {}, async (as, mcp) => {
      const events: LifecycleEvent[] = [];
      const e = await failure(
        connectTo(mcp, {
          onEvent: (ev) => events.push(ev),
          auth: { openUrl: browser(), tokenStore: false },
        }),
      );
      assert.equal(e.reason, "invalid_grant");
      assertClean(exposed(e, events), as);
      assertClean(String((e.cause as Error | undefined)?.message ?? ""), as);
    });
  });

  test("X2: a refused client assertion (private_key_jwt) echoed back never appears", async () => {
    const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
    const { publicKey: otherKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
    // The server knows another key: the signature fails and the refusal echoes the assertion.
    await withProtectedServer(
      {
        client: { id: "bot", publicJwk: otherKey.export({ format: "jwk" }) },
      },
      {},
      async (as, mcp) => {
        const events: LifecycleEvent[] = [];
        const jwk = privateKey.export({ format: "jwk" });
        const e = await failure(
          connectTo(mcp, {
            onEvent: (ev) => events.push(ev),
            auth: { grant: "client_credentials", clientId: "bot", privateKeyJwk: jwk, tokenStore: false },
          }),
        );
        assert.equal(e.reason, "invalid_client");
        const assertion = as.tokenRequests[0]?.get("client_assertion");
        assert.ok(assertion, "an assertion was sent");
        assertClean(exposed(e, events), as, [assertion!, jwk.d!]);
      },
    );
  });
});
