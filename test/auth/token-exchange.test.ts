// Enterprise-managed authorization: the user's ID token is exchanged at the enterprise identity
// provider (RFC 8693) for an ID-JAG, which the JWT-bearer grant presents at the MCP server's
// authorization server with the client's own credentials. The ID token, the ID-JAG and the
// client secret never appear in an error or an event.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { connect, type LifecycleEvent, MemoryTokenStore } from "../../src/index.ts";
import {
  connectTo,
  startAuthServer,
  startIdentityProvider,
  startProtectedServer,
} from "../helpers/auth-server.ts";
import { rejection } from "../helpers/failures.ts";

const CLIENT = { id: "mcp-app", secret: "cs-CANARY-enterprise-client" };

describe("auth: token exchange (enterprise-managed authorization)", () => {
  test("X2: ID token -> ID-JAG at the identity provider -> access token by the JWT-bearer grant", async () => {
    const idp = await startIdentityProvider({ asClientId: CLIENT.id });
    const as = await startAuthServer({ identityProvider: idp, client: CLIENT, registration: false });
    const mcp = await startProtectedServer(as);
    const events: LifecycleEvent[] = [];
    const idToken = idp.idToken();
    try {
      const client = await connectTo(mcp, {
        onEvent: (e) => events.push(e),
        auth: {
          grant: "token_exchange",
          clientId: CLIENT.id,
          clientSecret: CLIENT.secret,
          assertion: idToken,
          identityProvider: { tokenEndpoint: idp.tokenEndpoint, clientId: "idp-client" },
          tokenStore: new MemoryTokenStore(),
        },
      });
      try {
        await client.listTools();
      } finally {
        await client.close();
      }
      assert.equal(idp.exchanges.length, 1);
      const x = idp.exchanges[0]!;
      assert.equal(x.get("subject_token"), idToken);
      assert.equal(x.get("subject_token_type"), "urn:ietf:params:oauth:token-type:id_token");
      assert.equal(x.get("requested_token_type"), "urn:ietf:params:oauth:token-type:id-jag");
      assert.equal(x.get("audience"), as.origin, "the ID-JAG is for the MCP authorization server");
      assert.equal(x.get("resource"), mcp.url, "and for this MCP server");
      assert.equal(x.get("client_id"), "idp-client");
      assert.equal(as.tokenRequests.length, 1);
      assert.equal(as.tokenRequests[0]!.get("grant_type"), "urn:ietf:params:oauth:grant-type:jwt-bearer");
      const text = JSON.stringify(events);
      for (const s of [...idp.secrets, ...as.secrets, CLIENT.secret]) assert.ok(!text.includes(s));
    } finally {
      await mcp.close();
      await as.close();
      await idp.close();
    }
  });

  test("X2: an ID token the identity provider refuses fails unauthorized; nothing reaches the MCP authorization server", async () => {
    const idp = await startIdentityProvider({ asClientId: CLIENT.id });
    const as = await startAuthServer({ identityProvider: idp, client: CLIENT, registration: false });
    const mcp = await startProtectedServer(as);
    const forged = "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJDQU5BUlktZm9yZ2VkIn0.c2lnLUNBTkFSWS1mb3JnZWQ";
    try {
      const e = await rejection(
        connectTo(mcp, {
          auth: {
            grant: "token_exchange",
            clientId: CLIENT.id,
            clientSecret: CLIENT.secret,
            assertion: forged,
            identityProvider: { tokenEndpoint: idp.tokenEndpoint },
            tokenStore: false,
          },
        }),
      );
      assert.equal(e.code, "unauthorized");
      assert.equal(e.reason, "invalid_grant");
      assert.equal(as.tokenRequests.length, 0);
      const text = [e.message, JSON.stringify(e), String(e.cause)].join("\n");
      assert.ok(!text.includes(forged));
      assert.doesNotMatch(text, /CANARY/);
    } finally {
      await mcp.close();
      await as.close();
      await idp.close();
    }
  });

  test("P2: an identity provider token endpoint that is not an http(s) URL is a config error", async () => {
    const e = await rejection(
      connect({
        url: "http://127.0.0.1:9/mcp",
        auth: {
          grant: "token_exchange",
          clientId: CLIENT.id,
          assertion: "a.b.c",
          identityProvider: { tokenEndpoint: "ftp://idp.example/token" },
        },
      }),
    );
    assert.equal(e.code, "config");
  });
});
