// biome-ignore-all lint/suspicious/noTemplateCurlyInString: config files write ${env:VAR} references literally
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { TetherError } from "../errors/tether-error.ts";
import { type ConfigEnvironment, defaultConfigPaths, findServer, listServers } from "./config.ts";
import { keyPath, sameDefinition } from "./config-entry.ts";
import { CONFIG_FILE_MAX_BYTES, readConfigText } from "./config-file.ts";
import { mcpJson } from "./config-format.ts";
import { renderServers, shownUrl } from "./config-listing.ts";

const root = mkdtempSync(join(tmpdir(), "tether-config-unit-"));
after(() => rmSync(root, { recursive: true, force: true }));

let n = 0;
/** A fresh project folder and home; `files` maps paths under them (`repo/...`, `home/...`) to contents. */
function world(files: Record<string, unknown>, env: NodeJS.ProcessEnv = {}): ConfigEnvironment {
  const base = join(root, `w${n++}`);
  for (const [rel, content] of Object.entries(files)) {
    const path = join(base, rel);
    mkdirSync(join(path, ".."), { recursive: true });
    writeFileSync(path, typeof content === "string" ? content : JSON.stringify(content));
  }
  mkdirSync(join(base, "repo"), { recursive: true });
  mkdirSync(join(base, "home"), { recursive: true });
  return { cwd: join(base, "repo"), home: join(base, "home"), env, platform: "linux" };
}

function configFailure(fn: () => unknown, reason: string): TetherError {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof TetherError, String(error));
    assert.equal(error.code, "config");
    assert.equal(error.reason, reason, error.message);
    return error;
  }
  assert.fail(`expected a config error (${reason})`);
}

const SERVER = { command: "node", args: ["server.js"] };
const OTHER = { command: "node", args: ["other.js"] };

describe("the bounded read", () => {
  test("S3: an absent file defines nothing; a missing folder on the way is absent too", () => {
    assert.deepEqual(readConfigText(join(root, "nope.json")), { kind: "absent" });
    writeFileSync(join(root, "plain"), "x");
    assert.deepEqual(readConfigText(join(root, "plain", "mcp.json")), { kind: "absent" });
  });

  test("S3: exactly the bound is read; one byte more is refused", () => {
    writeFileSync(join(root, "at-bound"), "a".repeat(100));
    writeFileSync(join(root, "over-bound"), "a".repeat(101));
    assert.deepEqual(readConfigText(join(root, "at-bound"), 100), { kind: "text", text: "a".repeat(100) });
    assert.equal(
      (readConfigText(join(root, "over-bound"), 100) as { problem?: string }).problem,
      "too_large",
    );
    assert.equal(CONFIG_FILE_MAX_BYTES, 1024 * 1024);
  });

  test("S3: a file larger than its fstat size says is still cut at the bound while reading", (t) => {
    // /proc files are regular, report size 0, and yield more than that.
    if (!existsSync("/proc/self/status")) return t.skip("needs /proc");
    assert.equal((readConfigText("/proc/self/status", 16) as { problem?: string }).problem, "too_large");
  });

  test("S3: a FIFO, a device behind a symlink and a folder are refused without blocking", (t) => {
    const fifo = join(root, "fifo");
    try {
      execFileSync("mkfifo", [fifo]);
    } catch {
      return t.skip("needs mkfifo");
    }
    symlinkSync("/dev/zero", join(root, "zero"));
    mkdirSync(join(root, "folder"));
    for (const p of [fifo, join(root, "zero"), join(root, "folder")]) {
      assert.equal((readConfigText(p) as { problem?: string }).problem, "not_regular_file", p);
    }
  });

  test("S3: a symlink to a regular file is followed", () => {
    writeFileSync(join(root, "real.json"), "{}");
    symlinkSync(join(root, "real.json"), join(root, "link.json"));
    assert.deepEqual(readConfigText(join(root, "link.json")), { kind: "text", text: "{}" });
  });

  test("S3: text that is not UTF-8 is refused; a byte-order mark is dropped", () => {
    writeFileSync(join(root, "latin1"), Buffer.from([0x7b, 0xe9, 0x7d]));
    writeFileSync(join(root, "bom"), Buffer.from([0xef, 0xbb, 0xbf, 0x7b, 0x7d]));
    assert.equal((readConfigText(join(root, "latin1")) as { problem?: string }).problem, "invalid_encoding");
    assert.deepEqual(readConfigText(join(root, "bom")), { kind: "text", text: "{}" });
  });
});

describe("the JSON format", () => {
  test("S3: invalid JSON is reported without quoting the text", () => {
    const r = mcpJson('{"mcpServers": {"x": {"command": "secret-canary-77"');
    assert.equal(r.ok, false);
    assert.doesNotMatch(JSON.stringify(r), /canary/);
  });

  test("S3: mcpServers is read before servers; a map that is not an object is named by key path", () => {
    const both = mcpJson(JSON.stringify({ mcpServers: { a: SERVER }, servers: { b: SERVER } }));
    assert.ok(both.ok && both.map?.keyPath === "mcpServers" && both.map.entries[0]?.[0] === "a");
    assert.deepEqual(mcpJson(JSON.stringify({ servers: [1] })), {
      ok: false,
      problem: "invalid_config",
      keyPath: "servers",
      rule: "must be an object",
    });
    assert.deepEqual(mcpJson("{}"), { ok: true, map: undefined });
  });

  test("S3: key paths quote names that are not identifiers", () => {
    assert.equal(keyPath("mcpServers", "github"), "mcpServers.github");
    assert.equal(keyPath("mcpServers", "my server\u001b"), 'mcpServers["my server\\u001b"]');
    assert.equal(keyPath("args", 2), "args[2]");
  });

  test("S3: definitions compare as JSON, object key order aside", () => {
    assert.ok(sameDefinition({ command: "a", args: ["b"] }, { args: ["b"], command: "a" }));
    assert.ok(!sameDefinition({ command: "a", args: ["b", "c"] }, { command: "a", args: ["c", "b"] }));
    assert.ok(!sameDefinition({ command: "a" }, { command: "a", env: {} }));
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = [deep];
    assert.equal(sameDefinition(deep, deep), true);
    assert.equal(sameDefinition(deep, JSON.parse(JSON.stringify([[[1]]]))), false);
  });
});

describe("which definition a name means", () => {
  test("S3: a name defined differently in a project file and the user's is ambiguous, naming both files", () => {
    const w = world({
      "repo/.mcp.json": { mcpServers: { github: OTHER } },
      "home/.claude.json": { mcpServers: { github: SERVER } },
    });
    const e = configFailure(() => findServer("github", undefined, w), "ambiguous_server");
    assert.match(e.message, /repo\/\.mcp\.json/);
    assert.match(e.message, /home\/\.claude\.json/);
    assert.doesNotMatch(e.message, /other\.js|server\.js/);
  });

  test("S3: the same definition in two files is not ambiguous", () => {
    const w = world({
      "repo/.mcp.json": { mcpServers: { github: { args: ["server.js"], command: "node" } } },
      "home/.claude.json": { mcpServers: { github: SERVER } },
    });
    assert.equal(findServer("github", undefined, w).command, "node");
  });

  test("S3: the same server in two formats (.mcp.json and .vscode/mcp.json) is one server; what would run decides", () => {
    const w = world({
      "repo/.mcp.json": {
        mcpServers: { everything: { command: "npx", args: ["-y", "srv"], disabled: false } },
      },
      "repo/.vscode/mcp.json": {
        servers: { everything: { type: "stdio", command: "npx", args: ["-y", "srv"], env: {} } },
      },
    });
    assert.equal(findServer("everything", undefined, w).command, "npx");
    const differs = world({
      "repo/.mcp.json": { mcpServers: { everything: { command: "npx", args: ["-y", "srv"] } } },
      "repo/.vscode/mcp.json": {
        servers: { everything: { type: "stdio", command: "npx", args: ["-y", "srv", "--x"] } },
      },
    });
    configFailure(() => findServer("everything", undefined, differs), "ambiguous_server");
    const otherEnv = world({
      "repo/.mcp.json": { mcpServers: { everything: { command: "npx", env: { A: "1" } } } },
      "repo/.vscode/mcp.json": { servers: { everything: { type: "stdio", command: "npx" } } },
    });
    configFailure(() => findServer("everything", undefined, otherEnv), "ambiguous_server");
  });

  test("S3: Claude Code's state file may pass a megabyte; other files may not", () => {
    const history = "x".repeat(CONFIG_FILE_MAX_BYTES);
    const w = world({
      "home/.claude.json": { history, mcpServers: { github: SERVER } },
      "repo/.mcp.json": { history, mcpServers: { other: OTHER } },
    });
    assert.equal(findServer("github", undefined, w).command, "node");
    configFailure(() => findServer("other", undefined, w), "unknown_server");
  });

  test("S3: --config FILE reads only that file", () => {
    const w = world({
      "repo/.mcp.json": "{ not json",
      "home/.claude.json": { mcpServers: { github: SERVER } },
      "elsewhere/pick.json": { mcpServers: { github: OTHER } },
    });
    const picked = join(w.cwd, "..", "elsewhere", "pick.json");
    assert.deepEqual(findServer("github", picked, w).args, ["other.js"]);
    configFailure(() => findServer("github", join(w.cwd, "missing.json"), w), "config_unreadable");
    configFailure(() => findServer("github", join(w.cwd, ".mcp.json"), w), "invalid_config");
  });

  test("S3: a broken project file cannot contest or disable the user's servers", () => {
    const w = world({
      "repo/.mcp.json": "{ not json",
      "home/.claude.json": { mcpServers: { github: SERVER } },
    });
    assert.deepEqual(findServer("github", undefined, w).args, ["server.js"]);
    const e = configFailure(() => findServer("nope", undefined, w), "unknown_server");
    assert.match(e.message, /repo\/\.mcp\.json is not valid JSON/);
  });

  test("S3: a name only the project defines is refused while one of the user's files is broken", () => {
    const w = world({
      "repo/.mcp.json": { mcpServers: { github: OTHER } },
      "home/.claude.json": "{ not json",
    });
    const e = configFailure(() => findServer("github", undefined, w), "ambiguous_server");
    assert.match(e.message, /only in the project's .*repo\/\.mcp\.json.*home\/\.claude\.json/);
    // The user's broken file does not break a name the user's other files define.
    const w2 = world({
      "home/.cursor/mcp.json": { mcpServers: { github: SERVER } },
      "home/.claude.json": "{ not json",
    });
    assert.deepEqual(findServer("github", undefined, w2).args, ["server.js"]);
  });

  test("S3: a malformed entry breaks only its own name", () => {
    const w = world({
      "home/.claude.json": { mcpServers: { bad: { command: "x", args: "oops" }, good: SERVER } },
    });
    const e = configFailure(() => findServer("bad", undefined, w), "invalid_config");
    assert.match(e.message, /\.claude\.json: mcpServers\.bad\.args must be an array of strings/);
    assert.equal(findServer("good", undefined, w).command, "node");
  });

  test("S3: references expand only in the entry used; an unset one names the key path and variable", () => {
    const w = world(
      {
        "home/.claude.json": {
          mcpServers: {
            other: { command: "x", args: ["${env:TETHER_UNSET_VAR}"] },
            good: {
              url: "https://u:${PASS}@h.example/mcp?k=${env:KEY}",
              headers: { Authorization: "Bearer ${env:TOKEN}" },
            },
          },
        },
      },
      { TOKEN: "token-canary-1234", KEY: "key-canary-5678", PASS: "pass-canary-90" },
    );
    const good = findServer("good", undefined, w);
    assert.equal(good.url, "https://u:pass-canary-90@h.example/mcp?k=key-canary-5678");
    assert.equal(good.headers?.Authorization, "Bearer token-canary-1234");
    for (const s of ["token-canary-1234", "key-canary-5678", "pass-canary-90"])
      assert.ok(good.secrets.includes(s));
    const e = configFailure(() => findServer("other", undefined, w), "unset_variable");
    assert.match(e.message, /mcpServers\.other\.args\[0\] uses \$\{TETHER_UNSET_VAR\}/);
  });

  test("S3: the usual places are the documented ones, the project's first", () => {
    const paths = defaultConfigPaths("/p", "/h", "linux", { XDG_CONFIG_HOME: "/x" });
    assert.deepEqual(paths, [
      "/p/.mcp.json",
      "/p/.vscode/mcp.json",
      "/p/.cursor/mcp.json",
      "/h/.claude.json",
      "/h/.cursor/mcp.json",
      "/x/Code/User/mcp.json",
      "/h/.codeium/windsurf/mcp_config.json",
      "/x/Claude/claude_desktop_config.json",
      "/h/.codex/config.toml",
    ]);
    // Run from home, ./.cursor/mcp.json is the user's own file: read once.
    assert.equal(
      defaultConfigPaths("/h", "/h", "linux", {}).filter((p) => p === "/h/.cursor/mcp.json").length,
      1,
    );
  });
});

describe("the listing", () => {
  const CANARY = "canary-3f9d1b7e";
  const w = world(
    {
      "repo/.mcp.json": { mcpServers: { github: OTHER, "\u001b[31mred": SERVER } },
      "home/.claude.json": {
        mcpServers: {
          github: SERVER,
          web: {
            url: `https://me:${CANARY}@h.example/mcp?key=${CANARY}&ref=\${env:CANARY}#${CANARY}`,
            headers: { Authorization: `Bearer ${CANARY}`, "X-Ref": "Bearer ${env:CANARY}" },
          },
          cmd: {
            command: "node",
            args: ["s.js", `--key=${CANARY}`, "--ref=${env:CANARY}", `https://h.example/?t=${CANARY}`],
            env: { API_KEY: CANARY, REF: "${env:CANARY}" },
          },
          bad: { command: 3 },
          unset: { command: "x", args: ["${env:TETHER_UNSET_VAR}"] },
        },
      },
    },
    { CANARY },
  );

  test("S3: every definition is listed with its source, ambiguous ones marked, malformed ones reported", () => {
    const listing = listServers(undefined, w);
    const github = listing.servers.filter((s) => s.name === "github");
    assert.equal(github.length, 2);
    assert.ok(github.every((s) => s.ambiguous));
    assert.ok(
      listing.servers.some((s) => s.name === "unset"),
      "listing expands nothing",
    );
    assert.deepEqual(
      listing.problems.map((p) => [p.keyPath, p.reason]),
      [["mcpServers.bad", "invalid_config"]],
    );
  });

  test("S4: the listing shows references, never a literal secret, in JSON and in the table", () => {
    const listing = listServers(undefined, w);
    const json = renderServers(listing, true);
    const text = renderServers(listing, false);
    for (const out of [json, text]) {
      assert.ok(!out.includes(CANARY), out);
      assert.match(out, /\$\{env:CANARY\}/);
    }
    assert.ok(!text.includes("\u001b"), "server names from files are sanitized on a terminal");
    const doc = JSON.parse(json) as { servers: { name: string; target: string; headers?: object }[] };
    const web = doc.servers.find((s) => s.name === "web");
    assert.equal(
      web?.target,
      "https://[redacted]:[redacted]@h.example/mcp?key=[redacted]&ref=${env:CANARY}#[redacted]",
    );
    assert.deepEqual(web?.headers, { Authorization: "[redacted]", "X-Ref": "Bearer ${env:CANARY}" });
  });

  test("S4: a URL shown keeps its host, path and references readable", () => {
    assert.equal(shownUrl("https://h.example/a/b?x=${env:X}&flag"), "https://h.example/a/b?x=${env:X}&flag");
    assert.equal(shownUrl("${env:SERVER_URL}"), "${env:SERVER_URL}");
    assert.equal(shownUrl("not a url with secret"), "[redacted]");
  });
});
