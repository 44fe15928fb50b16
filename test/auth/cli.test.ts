// The CLI's authorization: `tether auth login|logout|status`, --stored-auth-only and --no-oauth,
// the token file's permissions, and credential canaries in everything the CLI prints. The CLI
// runs as a real child process (dist/tether.mjs) with TETHER_CONFIG_DIR in a scratch folder.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { connect, FileTokenStore } from "../../src/index.ts";
import { type AuthServer, browser, startAuthServer, startProtectedServer } from "../helpers/auth-server.ts";
import { CLI_BIN, type CliRun, errorRecord, runCli } from "../helpers/cli.ts";
import type { HostileServer } from "../helpers/hostile.ts";

function assertClean(run: CliRun, as: AuthServer): void {
  const text = run.stdout + run.stderr;
  for (const secret of as.secrets)
    assert.ok(!text.includes(secret), `leaked ${secret.slice(0, 12)}…: ${text}`);
  assert.doesNotMatch(text, /CANARY/);
}

/** Runs `tether auth login`, playing the browser with the URL it prints on stderr. */
function login(args: string[], env: Record<string, string>): Promise<CliRun> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI_BIN, "auth", "login", ...args], {
      env: { ...process.env, NO_COLOR: "1", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    let followed = false;
    child.stdout.on("data", (d) => {
      stdout += d;
    });
    child.stderr.on("data", (d) => {
      stderr += d;
      const url = /^\s+(http\S+)$/m.exec(stderr)?.[1];
      if (url && !followed) {
        followed = true;
        browser()(url, AbortSignal.timeout(10_000)).catch(reject);
      }
    });
    const killer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`auth login did not exit: ${stderr}`));
    }, 20_000);
    child.on("close", (code) => {
      clearTimeout(killer);
      resolve({ code, stdout, stderr, elapsedMs: performance.now() - started });
    });
  });
}

describe("K1, X2: tether auth and the OAuth flags", () => {
  let as: AuthServer;
  let mcp: HostileServer;
  let dir: string;
  let env: Record<string, string>;
  before(async () => {
    as = await startAuthServer();
    mcp = await startProtectedServer(as, { scopes: ["mcp:read"], echoAuthorization: true });
    dir = mkdtempSync(join(tmpdir(), "tether-auth-cli-"));
    env = { TETHER_CONFIG_DIR: join(dir, "config"), TETHER_CACHE_DIR: join(dir, "cache") };
  });
  after(async () => {
    await mcp.close();
    await as.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test("K1: without a stored token a script fails unauthorized at once (exit 6), no browser, no AS traffic", async () => {
    const run = await runCli(["tools", mcp.url], { env });
    assert.equal(run.code, 6);
    assert.equal(run.stdout, "");
    assert.equal(run.stderr.trim().split("\n").length, 1, "one line: the record, no URL to open");
    const record = errorRecord(run);
    assert.equal(record.code, "unauthorized");
    assert.equal(record.reason, "login_required");
    assert.equal(as.server.requests.length, 0);
  });

  test("auth login: the user is sent to the URL, the redirect comes back, the token is stored owner-only", async () => {
    const run = await login([mcp.url, "--json"], env);
    assert.equal(run.code, 0, run.stderr);
    const status = JSON.parse(run.stdout) as Record<string, unknown>;
    assert.equal(status.stored, true);
    assert.deepEqual(status.scopes, ["mcp:read"]);
    assert.equal(status.issuer, as.origin);
    assert.equal(status.refreshable, true);
    assertClean(run, as);
    const config = env.TETHER_CONFIG_DIR!;
    assert.equal(statSync(config).mode & 0o777, 0o700, "the folder is the user's only");
    assert.equal(statSync(join(config, "auth.json")).mode & 0o777, 0o600, "the file too");
    assert.deepEqual(readdirSync(config), ["auth.json"], "no temporary file left behind");
    assert.match(readFileSync(join(config, "auth.json"), "utf8"), /at-CANARY-/, "the token is in the file");
  });

  test("auth status shows what is stored and never the token", async () => {
    const json = await runCli(["auth", "status", mcp.url, "--json"], { env });
    assert.equal(json.code, 0, json.stderr);
    assert.equal((JSON.parse(json.stdout) as { stored: boolean }).stored, true);
    assertClean(json, as);
    const human = await runCli(["auth", "status", mcp.url], { env });
    assert.match(human.stdout, /stored\s+yes/);
    assertClean(human, as);
  });

  test("X2: a stored token echoed by the server is scrubbed from the record, with --debug and --events too", async () => {
    for (const extra of [[], ["--debug"], ["--events"], ["--stored-auth-only"]]) {
      const run = await runCli(["call", mcp.url, "echo", "text=hi", ...extra], { env });
      assert.equal(run.code, 7, run.stderr);
      assert.equal(errorRecord(run).code, "remote_error");
      assert.match(String(errorRecord(run).rpcMessage), /\[redacted\]/);
      assertClean(run, as);
    }
  });

  test("--no-oauth sends no token: the server's 401 stands", async () => {
    const run = await runCli(["tools", mcp.url, "--no-oauth"], { env });
    assert.equal(run.code, 6);
    assert.equal(errorRecord(run).reason, "http_401");
  });

  test("config: --no-oauth with an OAuth flag, or --bearer-env with one, is a configuration error", async () => {
    const both = await runCli(["tools", mcp.url, "--no-oauth", "--stored-auth-only"], { env });
    assert.equal(both.code, 2);
    const bearer = await runCli(["tools", mcp.url, "--bearer-env", "T", "--scope", "x"], {
      env: { ...env, T: "tok-CANARY-bearer" },
    });
    assert.equal(bearer.code, 2);
    assert.doesNotMatch(bearer.stderr, /CANARY/);
  });

  test("auth logout forgets the token; the next script run fails at once again", async () => {
    const out = await runCli(["auth", "logout", mcp.url, "--json"], { env });
    assert.equal(out.code, 0, out.stderr);
    assert.equal((JSON.parse(out.stdout) as { removed: boolean }).removed, true);
    const status = await runCli(["auth", "status", mcp.url, "--json"], { env });
    assert.equal((JSON.parse(status.stdout) as { stored: boolean }).stored, false);
    const run = await runCli(["tools", mcp.url, "--stored-auth-only"], { env });
    assert.equal(run.code, 6);
  });

  test("a token stored by the library's FileTokenStore is used by the CLI", async () => {
    const client = await connect({
      url: mcp.url,
      eraHints: false,
      auth: { openUrl: browser(), tokenStore: new FileTokenStore(env.TETHER_CONFIG_DIR) },
    });
    await client.close();
    const run = await runCli(["tools", mcp.url, "--json"], { env });
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(
      (JSON.parse(run.stdout) as { tools: { name: string }[] }).tools.map((t) => t.name),
      ["echo"],
    );
    assertClean(run, as);
  });
});
