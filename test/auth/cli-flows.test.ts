// The CLI's unattended grants and DPoP: `tether auth login --grant jwt_bearer|token_exchange`,
// `--dpop` with the key stored 0600 beside the tokens, and credential canaries (assertion, ID
// token, ID-JAG, client secrets, DPoP private key, tokens) in nothing the CLI prints, even when
// the server echoes the Authorization header back.
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import {
  type AuthServer,
  es256,
  type IdentityProvider,
  signJwt,
  startAuthServer,
  startIdentityProvider,
  startProtectedServer,
} from "../helpers/auth-server.ts";
import { type CliRun, errorRecord, runCli } from "../helpers/cli.ts";
import type { HostileServer } from "../helpers/hostile.ts";

function assertClean(run: CliRun, secrets: Iterable<string>): void {
  const text = run.stdout + run.stderr;
  for (const secret of secrets) assert.ok(!text.includes(secret), `leaked ${secret.slice(0, 12)}…: ${text}`);
  assert.doesNotMatch(text, /CANARY/);
}

describe("S4, K1: tether auth login with jwt_bearer, token_exchange and --dpop", () => {
  let dir: string;
  let env: Record<string, string>;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), "tether-auth-flows-"));
    env = { TETHER_CONFIG_DIR: join(dir, "config"), TETHER_CACHE_DIR: join(dir, "cache") };
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  describe("workload identity with DPoP", () => {
    let as: AuthServer;
    let mcp: HostileServer;
    const key = es256();
    let assertion = "";
    before(async () => {
      as = await startAuthServer({ workloadKey: key.publicJwk, registration: false, dpop: { nonce: true } });
      mcp = await startProtectedServer(as, { dpop: {}, echoAuthorization: true });
      const now = Math.floor(Date.now() / 1000);
      assertion = signJwt(
        { iss: "https://ci.example", sub: "job-CANARY-7", aud: as.origin, iat: now, exp: now + 600 },
        key.privateKey,
      );
    });
    after(async () => {
      await mcp.close();
      await as.close();
    });

    test("S4: login with an assertion file and --dpop stores a DPoP-bound token and its key 0600; nothing secret is printed", async () => {
      const file = join(dir, "workload.jwt");
      writeFileSync(file, `${assertion}\n`);
      const run = await runCli(
        ["auth", "login", mcp.url, "--grant", "jwt_bearer", "--assertion-file", file, "--dpop", "--json"],
        { env },
      );
      assert.equal(run.code, 0, run.stderr);
      const row = JSON.parse(run.stdout) as { stored: boolean; tokenType: string };
      assert.equal(row.stored, true);
      assert.equal(row.tokenType, "DPoP");
      const path = join(env.TETHER_CONFIG_DIR!, "auth.json");
      assert.equal(statSync(path).mode & 0o777, 0o600);
      const stored = JSON.parse(readFileSync(path, "utf8")) as {
        records: Record<string, { dpopKey?: { d?: string }; accessToken?: string }>;
      };
      const tokens = Object.values(stored.records).find((r) => r.accessToken);
      assert.equal(typeof tokens?.dpopKey?.d, "string", "the private key is kept with the tokens");
      assertClean(run, [...as.secrets, assertion, tokens!.dpopKey!.d!]);
    });

    test("S4: a later command presents the stored DPoP token; the server's echo of it is redacted", async () => {
      const before = as.tokenRequests.length;
      const run = await runCli(["call", mcp.url, "echo", "text=hi", "--stored-auth-only", "--json"], { env });
      assert.equal(as.tokenRequests.length, before, "no new token");
      const stored = JSON.parse(readFileSync(join(env.TETHER_CONFIG_DIR!, "auth.json"), "utf8")) as {
        records: Record<string, { dpopKey?: { d?: string } }>;
      };
      const d = Object.values(stored.records).find((r) => r.dpopKey)?.dpopKey?.d ?? "";
      assert.notEqual(run.code, 0, "the echoing server refuses the call");
      assert.equal(errorRecord(run).code, "remote_error");
      assertClean(run, [...as.secrets, assertion, d]);
    });

    test("K1: --assertion-env naming an unset variable, and an unknown --grant, are config errors", async () => {
      const unset = await runCli(
        ["tools", mcp.url, "--grant", "jwt_bearer", "--assertion-env", "NOPE_UNSET"],
        { env },
      );
      assert.equal(errorRecord(unset).code, "config");
      const bad = await runCli(["tools", mcp.url, "--grant", "password"], { env });
      assert.equal(errorRecord(bad).code, "config");
    });
  });

  describe("enterprise-managed authorization", () => {
    let idp: IdentityProvider;
    let as: AuthServer;
    let mcp: HostileServer;
    const client = { id: "ent-app", secret: "cs-CANARY-ent-secret" };
    before(async () => {
      idp = await startIdentityProvider({ asClientId: client.id });
      as = await startAuthServer({ identityProvider: idp, client, registration: false });
      mcp = await startProtectedServer(as);
    });
    after(async () => {
      await mcp.close();
      await as.close();
      await idp.close();
    });

    test("S4: login --grant token_exchange exchanges the ID token at the IdP and prints no credential", async () => {
      const idToken = idp.idToken();
      const run = await runCli(
        [
          "auth",
          "login",
          mcp.url,
          "--grant",
          "token_exchange",
          "--assertion-env",
          "ID_TOKEN",
          "--idp-token-endpoint",
          idp.tokenEndpoint,
          "--idp-client-id",
          "idp-client",
          "--client-id",
          client.id,
          "--client-secret-env",
          "APP_SECRET",
          "--json",
        ],
        { env: { ...env, ID_TOKEN: idToken, APP_SECRET: client.secret } },
      );
      assert.equal(run.code, 0, run.stderr);
      assert.equal((JSON.parse(run.stdout) as { stored: boolean }).stored, true);
      assert.equal(idp.exchanges.length, 1);
      assertClean(run, [...as.secrets, ...idp.secrets, client.secret]);
    });
  });
});
