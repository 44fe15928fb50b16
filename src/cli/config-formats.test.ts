// biome-ignore-all lint/suspicious/noTemplateCurlyInString: config files write ${...} references literally
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { TetherError } from "../errors/tether-error.ts";
import { type ConfigEnvironment, findServer, listServers } from "./config.ts";

const root = mkdtempSync(join(tmpdir(), "tether-config-formats-"));
after(() => rmSync(root, { recursive: true, force: true }));

let n = 0;
function world(files: Record<string, string>, env: NodeJS.ProcessEnv = {}): ConfigEnvironment {
  const base = join(root, `w${n++}`);
  mkdirSync(join(base, "repo"), { recursive: true });
  mkdirSync(join(base, "home"), { recursive: true });
  for (const [rel, content] of Object.entries(files)) {
    const path = join(base, rel.replace("<repo>", join(base, "repo")));
    mkdirSync(join(path, ".."), { recursive: true });
    writeFileSync(path, content.replaceAll("<repo>", join(base, "repo")));
  }
  return { cwd: join(base, "repo"), home: join(base, "home"), env, platform: "linux" };
}

function failure(fn: () => unknown): TetherError {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof TetherError, String(error));
    assert.equal(error.code, "config");
    return error;
  }
  assert.fail("expected a config error");
}

describe("config formats", () => {
  test("S3: VS Code's mcp.json is JSONC: comments and trailing commas; ${workspaceFolder} is the folder holding .vscode", () => {
    const where = world({
      "repo/.vscode/mcp.json": `{
  // the project's servers
  "servers": {
    "docs": { "command": "node", "args": ["\${workspaceFolder}/server.js",], /* trailing */ },
  },
}`,
    });
    const entry = findServer("docs", undefined, where);
    assert.deepEqual(entry.args, [`${where.cwd}/server.js`]);
  });

  test("S3: a JSONC syntax error names the file and line, never the text", () => {
    const where = world({ "repo/.vscode/mcp.json": '{ "servers": { "a": { "command": "SECRET-TEXT" ' });
    const e = failure(() => findServer("a", undefined, where));
    assert.match(e.message, /mcp\.json is not valid JSON or JSONC \(line 1\)/);
    assert.ok(!e.message.includes("SECRET"));
  });

  test("S3: a broken JSONC file breaks only the names it could define; another file's server still works", () => {
    const where = world({
      "repo/.vscode/mcp.json": "{ nope",
      "home/.cursor/mcp.json": JSON.stringify({ mcpServers: { mine: { command: "node" } } }),
    });
    assert.equal(findServer("mine", undefined, where).command, "node");
  });

  test("S3: ${input:ID} is asked for on a terminal, and a config error naming the key elsewhere", () => {
    const files = {
      "repo/.vscode/mcp.json": JSON.stringify({
        servers: {
          api: { url: "https://api.example/mcp", headers: { Authorization: "Bearer ${input:api-key}" } },
        },
      }),
    };
    const e = failure(() => findServer("api", undefined, world(files)));
    assert.equal(e.reason, "input_required");
    assert.match(e.message, /servers\.api\.headers\.Authorization uses \$\{input:api-key\}/);
    const asked: string[] = [];
    const entry = findServer("api", undefined, {
      ...world(files),
      input: (id) => {
        asked.push(id);
        return "tok-123";
      },
    });
    assert.deepEqual(asked, ["api-key"]);
    assert.equal(entry.headers?.Authorization, "Bearer tok-123");
    assert.ok(entry.secrets.includes("tok-123"));
  });

  test("S3: Claude Code's per-project servers in ~/.claude.json are read for the current folder, before its user servers", () => {
    const where = world({
      "home/.claude.json": `{"mcpServers":{"shared":{"command":"user"},"both":{"command":"user"}},
        "projects":{"<repo>":{"mcpServers":{"local":{"command":"project"},"both":{"command":"project"}}},
                    "/elsewhere":{"mcpServers":{"other":{"command":"x"}}}}}`,
    });
    assert.equal(findServer("local", undefined, where).command, "project");
    assert.equal(findServer("both", undefined, where).command, "project");
    assert.equal(findServer("shared", undefined, where).command, "user");
    assert.equal(failure(() => findServer("other", undefined, where)).reason, "unknown_server");
    const listed = listServers(undefined, where)
      .servers.map((s) => s.name)
      .sort();
    assert.deepEqual(listed, ["both", "local", "shared"]);
  });

  test("S3: an unknown server name suggests the closest configured ones", () => {
    const where = world({
      "repo/.mcp.json": JSON.stringify({ mcpServers: { github: { command: "node" } } }),
    });
    const e = failure(() => findServer("gihtub", undefined, where));
    assert.equal(e.reason, "unknown_server");
    assert.match(e.message, /\(did you mean github\?\)/);
  });

  test("S3: Codex's ~/.codex/config.toml [mcp_servers.NAME] is read, stdio and HTTP with a bearer variable", () => {
    const where = world(
      {
        "home/.codex/config.toml": `model = "x"
[mcp_servers.fs]
command = "npx"
args = ["-y", "server-fs"]
env = { ROOT = "/tmp" }

[mcp_servers.remote]
url = "https://remote.example/mcp"
bearer_token_env_var = "REMOTE_TOKEN"
`,
      },
      { REMOTE_TOKEN: "tok-remote" },
    );
    const fs = findServer("fs", undefined, where);
    assert.equal(fs.command, "npx");
    assert.deepEqual(fs.args, ["-y", "server-fs"]);
    assert.deepEqual(fs.env, { ROOT: "/tmp" });
    const remote = findServer("remote", undefined, where);
    assert.equal(remote.url, "https://remote.example/mcp");
    assert.equal(remote.headers?.Authorization, "Bearer tok-remote");
  });

  test("S3: a TOML syntax error names the file and line, never the text; --config FILE.toml reads TOML", () => {
    const where = world({ "home/.codex/config.toml": '[mcp_servers.a]\ncommand = "SECRET-TEXT\n' });
    const e = failure(() => findServer("a", undefined, where));
    assert.match(e.message, /config\.toml is not valid TOML/);
    assert.ok(!e.message.includes("SECRET"));
    const file = join(root, "named.toml");
    writeFileSync(file, '[mcp_servers.t]\ncommand = "node"\n');
    assert.equal(findServer("t", file, world({})).command, "node");
  });
});
