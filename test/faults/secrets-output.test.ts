// Secrets in output (CONTRACT S4, X2, K1, D1): a server that echoes back every secret it was given
// (the Authorization header, -H values, a URL's query and userinfo, the -e values and config-file
// env it reads from its environment, a stored OAuth token) into a tool description, a call
// result, a resource's text, a prompt and a JSON-RPC error message, as is, URL-encoded and
// base64. The built CLI is run in human and --json modes, with --events and --debug; not one
// byte of its stdout or stderr carries a canary in any of those forms, while ordinary words
// ("no token is stored") and the user's own URIs (demo://resource/1) come through untouched.

import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { type CliRun, errorRecord, runCli } from "../helpers/cli.ts";
import type { HostileServer, StdioScript } from "../helpers/hostile.ts";
import {
  type OutputDocument,
  outputServersForSuite,
  SEEN,
  writeStoredToken,
} from "../helpers/output-server.ts";

const CANARIES = {
  bearer: "bearer-CANARY-7d1e9a40c2",
  header: "header-CANARY-3f6b2c81aa",
  query: "query-CANARY-91e4b7d0f3",
  env: "envval-CANARY-5c2d8e1f77",
  password: "passwd-CANARY-0b7c4e2d19",
  configHeader: "cfghdr-CANARY-6a2f9d0e41",
  configEnv: "cfgenv-CANARY-2e8b5c7a93",
  configQuery: "cfgqry-CANARY-4d1a7e9b06",
  oauth: "oauth-CANARY-8c3f1b6d52",
} as const;

/** Every form of every canary a server might echo: as is, URL-encoded, base64, base64url. */
const FORBIDDEN = Object.values(CANARIES).flatMap((c) => [
  c,
  encodeURIComponent(c),
  Buffer.from(c).toString("base64").replace(/=+$/, ""),
  Buffer.from(c).toString("base64url"),
]);

const DOC: OutputDocument = {
  serverName: `echo ${SEEN}`,
  tools: [
    {
      name: "echo",
      description: `Echoes what it was given: ${SEEN}. Note: no token is stored.`,
      inputSchema: { type: "object", properties: { text: { type: "string" } } },
    },
    // The CLI calls only listed tools: these are the ones the tests call.
    { name: "structured", inputSchema: { type: "object" } },
    { name: "fail", inputSchema: { type: "object" } },
  ],
  call: { content: [{ type: "text", text: `you sent ${SEEN}` }], structuredContent: { seen: SEEN } },
  structured: { content: [], structuredContent: { seen: SEEN } },
  resources: [{ uri: "demo://resource/1", name: "one", description: `seen ${SEEN}` }],
  read: { contents: [{ uri: "demo://resource/1", mimeType: "text/plain", text: `resource text ${SEEN}` }] },
  prompts: [{ name: "greet", description: `seen ${SEEN}` }],
  prompt: { messages: [{ role: "user", content: { type: "text", text: `prompt ${SEEN}` } }] },
  errorMessage: `resource demo://resource/1: no token is stored; you sent ${SEEN}`,
};

function assertNoCanary(run: CliRun, what: string): void {
  const all = run.stdout + run.stderr;
  for (const form of FORBIDDEN) assert.ok(!all.includes(form), `${what}: output carries ${form}:\n${all}`);
  assert.ok(!all.includes("CANARY"), `${what}: output carries part of a canary:\n${all}`);
}

const scratch = mkdtempSync(join(tmpdir(), "tether-secrets-output-"));
const ENV = { TETHER_CACHE_DIR: join(scratch, "cache"), TETHER_CONFIG_DIR: join(scratch, "config") };
after(() => rmSync(scratch, { recursive: true, force: true }));

async function cli(args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  const run = await runCli(args, { env: { ...ENV, ...env }, timeoutMs: 30_000 });
  assertNoCanary(run, args.join(" "));
  return run;
}

/** Runs these argument lists a few at a time (each is a whole CLI process). */
async function all(runs: (() => Promise<void>)[], width = 3): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < runs.length) await runs[next++]!();
  };
  await Promise.all(Array.from({ length: width }, worker));
}

/** The commands whose output carries server text, human and --json, each with the target spliced in. */
const COMMANDS: string[][] = [
  ["tools"],
  ["call", "echo", "text=hi"],
  ["call", "structured"],
  ["resources"],
  ["read", "demo://resource/1"],
  ["prompts"],
  ["prompt", "greet"],
];

/** Checks a command's output: clean of canaries (by `cli`), and the ordinary text intact. */
function intact(command: string, run: CliRun, json: boolean): void {
  assert.equal(run.code, 0, `${command}: ${run.stderr}`);
  if (command === "tools") assert.match(run.stdout, /no token is stored/);
  if (command === "resources" || (command === "read" && json))
    assert.match(run.stdout, /demo:\/\/resource\/1/);
  if (json) JSON.parse(run.stdout);
  assert.match(run.stdout, /\[redacted\]/, `${command}: the echo is there, redacted`);
}

describe("secrets echoed by a server", () => {
  let stdio: StdioScript;
  let http: HostileServer;
  outputServersForSuite(DOC, (s, h) => ([stdio, http] = [s, h]));

  test("S4: -e values a stdio server echoes are redacted in every command, human and --json", async () => {
    const runs: (() => Promise<void>)[] = [];
    for (const command of COMMANDS)
      for (const json of [false, true])
        runs.push(async () => {
          const [name, ...rest] = command;
          const run = await cli([
            name!,
            ...rest,
            ...(json ? ["--json"] : []),
            "-e",
            `TETHER_ECHO_KEY=${CANARIES.env}`,
            "--",
            stdio.command,
            ...stdio.args,
          ]);
          intact(name!, run, json);
        });
    await all(runs);
  });

  test("S4: a bearer token, -H values and query values an HTTP server echoes are redacted everywhere", async () => {
    const url = `${http.url}?key=${CANARIES.query}`;
    const runs: (() => Promise<void>)[] = [];
    for (const command of COMMANDS)
      for (const json of [false, true])
        runs.push(async () => {
          const [name, ...rest] = command;
          const run = await cli(
            [
              name!,
              url,
              ...rest,
              ...(json ? ["--json"] : []),
              "--bearer-env",
              "TETHER_TEST_BEARER",
              "-H",
              `X-Api-Key: ${CANARIES.header}`,
            ],
            { TETHER_TEST_BEARER: CANARIES.bearer },
          );
          intact(name!, run, json);
        });
    await all(runs);
  });

  test("S4: --json documents stay exact apart from the secret", async () => {
    const run = await cli(
      ["call", "echo", "--json", "-e", `TETHER_ECHO_KEY=${CANARIES.env}`, "--", stdio.command, ...stdio.args],
      {},
    );
    const redacted = JSON.parse(
      JSON.stringify(DOC.call).split(SEEN).join("[redacted] [redacted] [redacted]"),
    );
    // The server echoed the value, its URL-encoded and its base64 form: each became [redacted].
    assert.deepEqual(JSON.parse(run.stdout), redacted);
  });

  test("S4/X2: the JSON-RPC error record, --debug causes and --events lines carry no secret; prose and URIs stay", async () => {
    const httpArgs = (extra: string[]) => [
      "call",
      `${http.url}?key=${CANARIES.query}`,
      "fail",
      ...extra,
      "--bearer-env",
      "TETHER_TEST_BEARER",
      "-H",
      `X-Api-Key: ${CANARIES.header}`,
    ];
    const stdioArgs = (extra: string[]) => [
      "call",
      "fail",
      ...extra,
      "-e",
      `TETHER_ECHO_KEY=${CANARIES.env}`,
      "--",
      stdio.command,
      ...stdio.args,
    ];
    for (const args of [
      httpArgs([]),
      httpArgs(["--debug", "--events"]),
      stdioArgs([]),
      stdioArgs(["--debug", "--events"]),
      [...httpArgs(["--events"]).slice(0, 2), "echo", ...httpArgs(["--events"]).slice(3)],
    ]) {
      const run = await cli(args, { TETHER_TEST_BEARER: CANARIES.bearer });
      if (args[2] === "echo") {
        assert.equal(run.code, 0, run.stderr);
        for (const line of run.stderr.trim().split("\n")) JSON.parse(line);
        continue;
      }
      assert.equal(run.stdout, "");
      const record = errorRecord(run);
      assert.equal(record.code, "remote_error");
      const rpc = String(record.rpcMessage);
      assert.match(rpc, /^resource demo:\/\/resource\/1: no token is stored; you sent /);
      assert.match(rpc, /\[redacted\]/);
      if (args.includes("--debug")) assert.ok(Array.isArray(record.debug));
    }
  });

  test("S4: secrets from a config file (env, headers expanded from the environment, URL query and userinfo) are redacted", async () => {
    const file = join(scratch, "servers.json");
    const port = new URL(http.url).port;
    writeFileSync(
      file,
      JSON.stringify({
        mcpServers: {
          "echo-http": {
            url: `${http.url}?token=${CANARIES.configQuery}`,
            // biome-ignore lint/suspicious/noTemplateCurlyInString: a reference the config loader expands
            headers: { "X-Config-Key": "${env:TETHER_TEST_CFG_HEADER}" },
          },
          "echo-userinfo": { url: `http://alice:${CANARIES.password}@127.0.0.1:${port}/mcp` },
          "echo-stdio": {
            command: stdio.command,
            args: stdio.args,
            env: { TETHER_ECHO_CFG: CANARIES.configEnv },
          },
        },
      }),
    );
    const runs: (() => Promise<void>)[] = [];
    for (const name of ["echo-http", "echo-userinfo", "echo-stdio"])
      for (const [command, json] of [
        ["tools", false],
        ["call", true],
      ] as const)
        runs.push(async () => {
          const run = await cli(
            [
              command,
              name,
              ...(command === "call" ? ["echo"] : []),
              "--config",
              file,
              ...(json ? ["--json"] : []),
            ],
            { TETHER_TEST_CFG_HEADER: CANARIES.configHeader },
          );
          intact(command, run, json);
        });
    await all(runs);
  });

  test("S4: a stored OAuth token the server echoes is redacted, in human and --json output", async () => {
    const configDir = join(scratch, "oauth");
    const url = http.url;
    const { mkdirSync } = await import("node:fs");
    mkdirSync(configDir, { recursive: true, mode: 0o700 });
    writeStoredToken(configDir, url, { accessToken: CANARIES.oauth });
    for (const json of [false, true]) {
      const run = await cli(["call", url, "echo", ...(json ? ["--json"] : [])], {
        TETHER_CONFIG_DIR: configDir,
      });
      intact("call", run, json);
    }
    const seenAuth = http.requests.some((r) => r.headers.authorization === `Bearer ${CANARIES.oauth}`);
    assert.ok(seenAuth, "the stored token was sent, so the server really had it to echo");
  });
});
