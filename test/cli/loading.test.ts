// What the CLI loads for a command: only what that command uses. A cold `tether tools -- CMD`
// compiles every module it loads before it can start the server, so the HTTP transports (with
// their HTTP client, redirect policy and SSE parser) and the help text stay out of a stdio
// command. Observed on the real bundle through a module resolve hook that records every module
// the CLI process resolves.

import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, describe, test } from "node:test";
import { pathToFileURL } from "node:url";
import { CLI_BIN, runCli } from "../helpers/cli.ts";
import { legacyStdio, stdioScript } from "../helpers/deadline-servers.ts";

const dir = mkdtempSync(join(tmpdir(), "tether-loading-"));
after(() => rmSync(dir, { recursive: true, force: true }));

// The hook runs in the CLI process only (the server it spawns inherits NODE_OPTIONS too).
const hooks = join(dir, "hooks.mjs");
writeFileSync(
  hooks,
  `import { appendFileSync } from "node:fs";
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  appendFileSync(process.env.LOADED_LOG, resolved.url + "\\n");
  return resolved;
}
`,
);
const register = join(dir, "register.mjs");
writeFileSync(
  register,
  `import { register } from "node:module";
if (process.argv[1] === ${JSON.stringify(CLI_BIN)}) register(${JSON.stringify(pathToFileURL(hooks).href)});
`,
);

let runs = 0;
/** Every module the CLI process resolved while running `args`. */
async function loadedBy(args: string[]): Promise<{ code: number | null; stderr: string; loaded: string[] }> {
  const log = join(dir, `loaded-${runs++}.txt`);
  writeFileSync(log, "");
  const run = await runCli(args, {
    env: {
      NODE_OPTIONS: `--import ${pathToFileURL(register).href}`,
      LOADED_LOG: log,
      TETHER_CACHE_DIR: mkdtempSync(join(dir, "cache-")),
    },
  });
  return {
    code: run.code,
    stderr: run.stderr,
    loaded: readFileSync(log, "utf8").split("\n").filter(Boolean),
  };
}

/** The bundle's chunk whose code contains `marker`. */
function chunkWith(marker: string): string {
  const chunks = join(dirname(CLI_BIN), "tether-chunks");
  const found = readdirSync(chunks).filter((f) => readFileSync(join(chunks, f), "utf8").includes(marker));
  assert.equal(found.length, 1, `exactly one chunk holds ${JSON.stringify(marker)}`);
  return pathToFileURL(join(chunks, found[0]!)).href;
}

describe("K1: a command loads what it uses", () => {
  test("K1: a stdio command loads neither the HTTP transports nor the help text", async () => {
    const server = stdioScript(legacyStdio());
    try {
      const { code, stderr, loaded } = await loadedBy(["tools", "--", server.command, ...server.args]);
      assert.equal(code, 0, stderr);
      assert.ok(
        loaded.some((u) => u === "node:child_process"),
        "the hook saw the stdio transport's modules",
      );
      for (const unwanted of ["node:http", "node:https", "eventsource-parser"])
        assert.ok(!loaded.some((u) => u.includes(unwanted)), `${unwanted} was loaded by a stdio command`);
      assert.ok(!loaded.includes(chunkWith("Connection options:")), "the help text was loaded");
      assert.ok(!loaded.includes(chunkWith("StreamableHttpTransport")), "the HTTP transports were loaded");
      // The command table loads the one command asked for: its module, and no other command's.
      assert.ok(loaded.includes(chunkWith("tether tools <target> [options]")), "the tools command's module");
      assert.ok(
        !loaded.includes(chunkWith("tether call <target> <tool> [ARGS] [options]")),
        "another command's module was loaded",
      );
    } finally {
      server.dispose();
    }
  });

  test("K1: --help loads the help text; --version does not", async () => {
    const help = chunkWith("Connection options:");
    const asked = await loadedBy(["--help"]);
    assert.equal(asked.code, 0, asked.stderr);
    assert.ok(asked.loaded.includes(help));
    const version = await loadedBy(["--version"]);
    assert.equal(version.code, 0, version.stderr);
    assert.ok(!version.loaded.includes(help));
  });
});
