// Secrets through a session (CONTRACT S4, X2): a command on @NAME knows none of the session's
// secrets, so the session process redacts everything it hands back with its connection's own.
// A careless server (fixtures/secrets/echo-server.mjs, the official SDK) echoes the bearer token,
// a -H value, a URL query value and -e values, as is, URL-encoded, JSON-escaped and base64 at
// every alignment, into instructions, listings, results, resources, prompts, completions, logs,
// progress and errors. Over stdio, Streamable HTTP and HTTP+SSE upstream, every command on @NAME
// (human and --json), `session start` and `session list`, a watch and the shell print [redacted]
// where the echo was and not one form of any canary.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { assertNoLeak, CANARIES, CANARY_QUERY, leaks, useEchoServer } from "../helpers/canaries.ts";
import { CLI_BIN, type CliRun, runProcess } from "../helpers/cli.ts";
import { type Sandbox, sandboxFor } from "../sessions/sandbox.ts";

const { http: echoHttp, env: ENV, upstreams: UPSTREAMS } = useEchoServer();

/** Every command that shows what the server said, on @s. */
const COMMANDS: string[][] = [
  ["call", "@s", "echo"],
  ["call", "@s", "echo", "--json"],
  ["call", "@s", "chatty", "--json", "--events"],
  ["tools", "@s"],
  ["tools", "@s", "--json"],
  ["read", "@s", "demo://resource/1"],
  ["read", "@s", "demo://resource/1", "--json"],
  ["resources", "@s", "--json"],
  ["templates", "@s"],
  ["prompts", "@s", "--json"],
  ["prompt", "@s", "greet"],
  ["prompt", "@s", "greet", "--json"],
  ["complete", "@s", "prompt:greet", "name=a", "--json"],
  ["session", "list", "--json"],
];

function clean(run: CliRun, what: string): void {
  assertNoLeak(run.stdout + run.stderr, what);
}

/** `tether shell @s` with these lines on its stdin. */
function shell(box: Sandbox, lines: string[]): Promise<CliRun> {
  return runProcess(process.execPath, [CLI_BIN, "shell", "@s"], {
    env: { ...process.env, NO_COLOR: "1", ...box.env },
    timeoutMs: 30_000,
    name: "tether shell @s",
    input: `${lines.join("\n")}\n`,
  });
}

/**
 * `tether watch @s --json` until it has printed a log line: `chatty` is called (each call a
 * command of its own) until the watch shows what it logged, then the watch is stopped.
 */
async function watched(box: Sandbox): Promise<string> {
  const child = spawn(process.execPath, [CLI_BIN, "watch", "@s", "--json", "--duration", "60000"], {
    env: { ...process.env, NO_COLOR: "1", ...box.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout.on("data", (d) => {
    out += d;
  });
  child.stderr.on("data", (d) => {
    out += d;
  });
  const closed = new Promise<void>((resolve) => child.once("close", () => resolve()));
  try {
    for (let i = 0; i < 40 && !out.includes('"type":"log"'); i++) {
      const call = await box.run(["call", "@s", "chatty"]);
      assert.equal(call.code, 0, call.stderr);
    }
  } finally {
    child.kill("SIGINT");
    await closed;
  }
  return out;
}

describe("secrets through a session", { concurrency: true }, () => {
  for (const [upstream, target] of Object.entries(UPSTREAMS)) {
    test(`S4: through @NAME over ${upstream}: every command, the watch and the shell print [redacted], never a canary`, async (t) => {
      const box = sandboxFor(t);
      const start = await box.run(
        ["session", "start", "s", "--json", "--idle-timeout", "120000", ...target()],
        { env: ENV },
      );
      assert.equal(start.code, 0, start.stderr);
      clean(start, "session start");
      const info = JSON.parse(start.stdout) as { daemonPid: number; instructions?: string };
      box.pids.add(info.daemonPid);
      assert.match(String(info.instructions), /^Instructions: plain=\[redacted\]/);
      assert.match(String(info.instructions), /no token is stored/, "ordinary words stay");
      try {
        for (const command of COMMANDS) {
          const run = await box.run(command);
          assert.equal(run.code, 0, `${command.join(" ")}: ${run.stderr}`);
          clean(run, command.join(" "));
          if (command[0] !== "session" && command[0] !== "templates" && command[2] !== "chatty")
            assert.match(run.stdout, /\[redacted\]/, `${command.join(" ")}: the echo is there, redacted`);
        }
        const echoed = await box.run(["call", "@s", "echo", "--json"]);
        const doc = JSON.parse(echoed.stdout) as { structuredContent: { seen: string } };
        assert.match(
          doc.structuredContent.seen,
          /^plain=\[redacted\] url=\[redacted\] json=\{"got":"\[redacted\]"\}/,
        );
        const failed = await box.run(["call", "@s", "fail"]);
        assert.equal(failed.code, 7, failed.stderr);
        clean(failed, "call @s fail");
        assert.match(failed.stderr, /no token is stored/);
        const sh = await shell(box, [
          "call chatty",
          "call echo",
          "tools",
          "read demo://resource/1",
          "prompt greet",
        ]);
        clean(sh, "shell @s");
        assert.match(sh.stdout, /\[redacted\]/);
        const watch = await watched(box);
        assertNoLeak(watch, "watch @s");
        assert.match(watch, /"type":"log"/, "the watch saw the log line");
        assert.match(watch, /\[redacted\]/);
      } finally {
        await box.run(["session", "stop", "s"]);
      }
    });
  }

  test("S4: a stored OAuth token the server echoes through @NAME is redacted by the session process", async (t) => {
    const box = sandboxFor(t);
    const token = "oauth.CANARY-8c3f1b6d52/access+token";
    const configDir = String(box.env.TETHER_CONFIG_DIR);
    mkdirSync(configDir, { recursive: true, mode: 0o700 });
    writeFileSync(
      join(configDir, "auth.json"),
      JSON.stringify({
        version: 1,
        records: {
          [`server ${echoHttp().url}`]: {
            kind: "tokens",
            resource: echoHttp().url,
            issuer: "https://as.example",
            tokenEndpoint: "https://as.example/token",
            clientId: "c",
            authMethod: "none",
            accessToken: token,
          },
        },
      }),
      { mode: 0o600 },
    );
    const start = await box.run([
      "session",
      "start",
      "s",
      "--json",
      "--idle-timeout",
      "120000",
      echoHttp().url,
    ]);
    assert.equal(start.code, 0, start.stderr);
    box.pids.add((JSON.parse(start.stdout) as { daemonPid: number }).daemonPid);
    try {
      for (const command of [
        ["call", "@s", "echo"],
        ["call", "@s", "echo", "--json"],
        ["tools", "@s", "--json"],
      ]) {
        const run = await box.run(command);
        assert.equal(run.code, 0, run.stderr);
        clean(run, command.join(" "));
        assert.match(
          run.stdout,
          /\[redacted\]/,
          "the server echoed the token it was sent, and it is redacted",
        );
      }
    } finally {
      await box.run(["session", "stop", "s"]);
    }
  });

  test("S4: the same careless server without a session is redacted alike (the one-shot baseline)", async (t) => {
    const box = sandboxFor(t);
    const run = await box.run(
      [
        "call",
        `${echoHttp().url}?${CANARY_QUERY}`,
        "echo",
        "--bearer-env",
        "TETHER_TEST_BEARER",
        "-H",
        `X-Api-Key: ${CANARIES.header}`,
      ],
      { env: ENV },
    );
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(leaks(run.stdout + run.stderr), []);
    assert.match(run.stdout, /\[redacted\]/);
  });
});
