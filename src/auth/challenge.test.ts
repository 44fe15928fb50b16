import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { bearerChallenge, dpopNonceChallenge, parseChallenges, scopeList, unionScopes } from "./challenge.ts";

describe("WWW-Authenticate parsing", () => {
  test("auth: a Bearer challenge's resource_metadata, scope and error, quoted or not", () => {
    const c = bearerChallenge(
      'Bearer error="insufficient_scope", scope="files:read  files:write", resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource", error_description="needs \\"write\\""',
    );
    assert.deepEqual(c, {
      error: "insufficient_scope",
      scopes: ["files:read", "files:write"],
      resourceMetadata: "https://mcp.example.com/.well-known/oauth-protected-resource",
    });
    assert.deepEqual(bearerChallenge("Bearer error=invalid_token"), {
      error: "invalid_token",
      scopes: undefined,
      resourceMetadata: undefined,
    });
  });

  test("auth: the Bearer challenge is found among others, with a token68 and odd spacing", () => {
    const header = 'Basic dXNlcjpwYXNz==, Newauth realm="apps", type=1 , Bearer  scope = "a b" ,realm="x"';
    assert.deepEqual(
      parseChallenges(header).map((c) => c.scheme),
      ["basic", "newauth", "bearer"],
    );
    assert.deepEqual(bearerChallenge(header)?.scopes, ["a", "b"]);
  });

  test("auth: no header, no Bearer scheme, or garbage gives no challenge and never throws", () => {
    assert.equal(bearerChallenge(null), undefined);
    assert.equal(bearerChallenge('Basic realm="x"'), undefined);
    for (const junk of ['"', "=", ",,,", 'Bearer ="x"', 'Bearer scope="unterminated', "\u0000Bearer"]) {
      assert.doesNotThrow(() => bearerChallenge(junk));
    }
    assert.deepEqual(bearerChallenge("Bearer")?.scopes, undefined);
  });

  test("auth: a DPoP-only challenge stands in for Bearer; use_dpop_nonce is recognised only under DPoP", () => {
    const dpop = bearerChallenge('DPoP algs="ES256", resource_metadata="https://a.example/prm"');
    assert.equal(dpop?.resourceMetadata, "https://a.example/prm");
    const both = bearerChallenge(
      'DPoP resource_metadata="https://d.example", Bearer resource_metadata="https://b.example"',
    );
    assert.equal(both?.resourceMetadata, "https://b.example", "Bearer first when both are offered");
    assert.equal(dpopNonceChallenge('DPoP error="use_dpop_nonce"'), true);
    assert.equal(dpopNonceChallenge('Bearer error="use_dpop_nonce"'), false);
    assert.equal(dpopNonceChallenge('DPoP error="invalid_token"'), false);
    assert.equal(dpopNonceChallenge(null), false);
  });

  test("auth: scope lists drop duplicates and blanks; unions keep first-seen order", () => {
    assert.deepEqual(scopeList(" a  b a "), ["a", "b"]);
    assert.deepEqual(scopeList(undefined), []);
    assert.deepEqual(unionScopes(["a", "b"], undefined, ["b", "c"]), ["a", "b", "c"]);
  });
});
