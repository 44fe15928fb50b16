// `auth` is validated once, before any I/O: each bad combination is a `config` error naming the
// option and the rule, and a secret given in it never shows in the message.
import assert from "node:assert/strict";
import { test } from "node:test";
import { type ConnectOptions, connect, TetherError } from "../../src/index.ts";

const url = "http://127.0.0.1:9/mcp";

test("P2: auth options are validated before any I/O, each a config error naming the option", async () => {
  let fetched = 0;
  const deps = {
    fetch: (() => {
      fetched++;
      return Promise.reject(new Error("no I/O expected"));
    }) as typeof fetch,
  };
  // Shaped as a caller in plain JavaScript might pass them: not type-checked on purpose.
  const cases: [string, Record<string, unknown>, RegExp][] = [
    ["mode", { auth: { mode: "sometimes" } }, /auth\.mode/],
    ["grant", { auth: { grant: "password" } }, /auth\.grant/],
    [
      "client credentials without a secret",
      { auth: { grant: "client_credentials", clientId: "x" } },
      /clientSecret/,
    ],
    ["a secret without a client", { auth: { clientSecret: "cs-CANARY-1" } }, /auth\.clientId/],
    [
      "secret and key",
      { auth: { clientId: "x", clientSecret: "cs-CANARY-2", privateKeyJwk: { kty: "EC", d: "k-CANARY" } } },
      /cannot be combined/,
    ],
    [
      "a public key",
      { auth: { clientId: "x", privateKeyJwk: { kty: "EC", x: "a", y: "b" } } },
      /privateKeyJwk/,
    ],
    ["redirect port", { auth: { redirectPort: 70_000 } }, /auth\.redirectPort/],
    ["metadata URL over http", { auth: { clientMetadataUrl: "http://example.com/c.json" } }, /https/],
    ["metadata URL without a path", { auth: { clientMetadataUrl: "https://example.com" } }, /path/],
    ["openUrl", { auth: { openUrl: "firefox" } }, /auth\.openUrl/],
    ["store", { auth: { tokenStore: {} } }, /auth\.tokenStore/],
    [
      "an Authorization header too",
      { headers: { Authorization: "Bearer tok-CANARY-3" }, auth: {} },
      /Authorization/,
    ],
    ["a stdio server", { url: undefined, command: "node", auth: {} }, /HTTP servers/],
  ];
  for (const [name, extra, rule] of cases) {
    try {
      await connect({ url, ...extra, deps } as unknown as ConnectOptions);
      assert.fail(`${name}: expected a config error`);
    } catch (error) {
      assert.ok(error instanceof TetherError, name);
      assert.equal(error.code, "config", name);
      assert.match(error.message, rule, name);
      assert.doesNotMatch(JSON.stringify(error), /CANARY/, name);
    }
  }
  assert.equal(fetched, 0, "nothing was fetched");
});

test("auth: mode off is no authorization at all, even on a stdio server", async () => {
  await assert.rejects(
    connect({
      command: process.execPath,
      args: ["-e", "process.exit(3)"],
      // As a JavaScript caller may: the types keep auth to HTTP targets.
      auth: { mode: "off" } as never,
      timeoutMs: 5_000,
    }),
    (e: unknown) => e instanceof TetherError && e.code !== "config",
  );
});
