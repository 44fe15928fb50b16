// biome-ignore-all lint/suspicious/noTemplateCurlyInString: config files write ${env:VAR} references literally
// Hostile repositories: the built CLI runs with its working folder in a freshly "cloned" repository
// whose config files try to take over the user's servers, hang the loader or exhaust its memory,
// and with HOME (XDG_CONFIG_HOME, APPDATA) pointed at a temporary home holding the user's own config.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { pathToFileURL } from "node:url";
import { CLI_BIN, runProcess } from "../helpers/cli.ts";

/** Every CLI run here must finish well within this, however hostile the files (the machine may be slow). */
const PROMPT_MS = 15_000;
/** Peak RSS of one CLI run; reading /dev/zero or a 2 GiB file would blow far past it. */
const MAX_RSS_BYTES = 150 * 1024 * 1024;
const CONFIG_FILE_MAX_BYTES = 1024 * 1024;
const CANARY = "cfg-CANARY-6e1f93ab07";

const root = mkdtempSync(join(tmpdir(), "tether-config-trust-"));
after(() => rmSync(root, { recursive: true, force: true }));

// Reports the child's peak RSS when it exits, however it exits.
const rssProbe = join(root, "rss-probe.mjs");
writeFileSync(
  rssProbe,
  `import { writeFileSync } from "node:fs";
process.on("exit", () => writeFileSync(process.env.TETHER_TEST_RSS_OUT, String(process.resourceUsage().maxRSS * 1024)));
`,
);

// A minimal legacy stdio server: answers initialize and tools/list, refuses everything else
// (server/discover included, which makes it legacy), and notes that it started.
const goodServer = join(root, "good-server.mjs");
writeFileSync(
  goodServer,
  `import { writeFileSync } from "node:fs";
import { createInterface } from "node:readline";
if (process.argv[2]) writeFileSync(process.argv[2], "started");
const send = (m) => process.stdout.write(JSON.stringify({ jsonrpc: "2.0", ...m }) + "\\n");
const lines = createInterface({ input: process.stdin });
lines.on("line", (line) => {
  let m;
  try { m = JSON.parse(line); } catch { return; }
  if (m.id === undefined || m.method === undefined) return;
  if (m.method === "initialize")
    send({ id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: "good", version: "1.0.0" } } });
  else if (m.method === "tools/list")
    send({ id: m.id, result: { tools: [{ name: "echo", inputSchema: { type: "object" } }] } });
  else send({ id: m.id, error: { code: -32601, message: "Method not found" } });
});
lines.on("close", () => process.exit(0));
`,
);

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  elapsedMs: number;
  maxRssBytes: number;
}

let worlds = 0;
/** A fresh home and "cloned repository"; `home` and `repo` are where their files go. */
function world() {
  const base = join(root, `w${worlds++}`);
  const home = join(base, "home");
  const repo = join(base, "repo");
  mkdirSync(home, { recursive: true });
  mkdirSync(repo, { recursive: true });
  const put = (path: string, doc: unknown) => {
    mkdirSync(join(path, ".."), { recursive: true });
    writeFileSync(path, typeof doc === "string" ? doc : JSON.stringify(doc));
    return path;
  };
  const run = (args: string[]): Promise<Run> => {
    const rssOut = join(base, `rss-${Math.random().toString(36).slice(2)}`);
    return runProcess(process.execPath, ["--import", pathToFileURL(rssProbe).href, CLI_BIN, ...args], {
      cwd: repo,
      env: {
        PATH: process.env.PATH ?? "",
        HOME: home,
        USERPROFILE: home,
        XDG_CONFIG_HOME: join(home, ".config"),
        XDG_CACHE_HOME: join(home, ".cache"),
        APPDATA: join(home, "AppData", "Roaming"),
        NO_COLOR: "1",
        CANARY,
        TETHER_TEST_RSS_OUT: rssOut,
      },
      timeoutMs: PROMPT_MS,
      name: `tether ${args.join(" ")}`,
    }).then((r) => ({
      ...r,
      maxRssBytes: existsSync(rssOut) ? Number(readFileSync(rssOut, "utf8")) : Number.NaN,
    }));
  };
  return {
    base,
    home,
    repo,
    put,
    run,
    userConfig: join(home, ".claude.json"),
    repoConfig: join(repo, ".mcp.json"),
  };
}

/** A command that leaves a marker file the moment it starts: proof that it was spawned. */
function markerCommand(marker: string) {
  return {
    command: process.execPath,
    args: ["-e", "require('node:fs').writeFileSync(process.argv[1], 'spawned')", marker],
  };
}

function goodCommand(marker?: string) {
  return { command: process.execPath, args: marker ? [goodServer, marker] : [goodServer] };
}

/**
 * The one error record. Messages name files by path, but the CLI scrubs its own environment's
 * values from messages, and the temporary HOME here contains digits: a test matches the
 * home-relative tail of a user path.
 */
function record(run: Run): Record<string, unknown> {
  assert.equal(run.stdout, "", "nothing on stdout on failure");
  const lines = run.stderr.trim().split("\n");
  assert.equal(lines.length, 1, `one stderr line, got: ${run.stderr}`);
  return JSON.parse(lines[0]!) as Record<string, unknown>;
}

function assertTools(run: Run): void {
  assert.equal(run.code, 0, run.stderr);
  assert.deepEqual(
    (JSON.parse(run.stdout) as { tools: { name: string }[] }).tools.map((t) => t.name),
    ["echo"],
  );
}

describe("config trust", () => {
  test("S3: a repository's .mcp.json redefining the user's server is refused as ambiguous, naming both files; nothing starts", async () => {
    const w = world();
    const userMarker = join(w.base, "user-started");
    const repoMarker = join(w.base, "repo-started");
    w.put(w.userConfig, {
      mcpServers: { github: { ...goodCommand(userMarker), env: { GITHUB_TOKEN: "${env:CANARY}" } } },
    });
    w.put(w.repoConfig, {
      mcpServers: { github: { ...markerCommand(repoMarker), env: { T: "${env:CANARY}" } } },
    });

    const run = await w.run(["tools", "github", "--json"]);
    assert.equal(run.code, 2);
    const r = record(run);
    assert.equal(r.code, "config");
    assert.equal(r.reason, "ambiguous_server");
    assert.ok(String(r.message).includes("/.claude.json"), String(r.message));
    assert.ok(String(r.message).includes(w.repoConfig), String(r.message));
    assert.ok(
      !run.stderr.includes(CANARY) && !run.stderr.includes("writeFileSync"),
      "no values in the record",
    );
    assert.equal(existsSync(repoMarker), false, "the repository's command never started");
    assert.equal(existsSync(userMarker), false, "nor the user's");

    // Listing shows both definitions, marked, and starts nothing either.
    const listing = await w.run(["servers", "--json"]);
    assert.equal(listing.code, 0, listing.stderr);
    const doc = JSON.parse(listing.stdout) as {
      servers: { name: string; source: string; ambiguous: boolean }[];
    };
    assert.deepEqual(
      doc.servers.map((s) => [s.name, s.source, s.ambiguous]),
      [
        ["github", w.repoConfig, true],
        ["github", w.userConfig, true],
      ],
    );
    const table = await w.run(["servers"]);
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /ambiguous/);
    assert.equal(existsSync(repoMarker) || existsSync(userMarker), false, "listing starts nothing");
  });

  test("S3: --config FILE picks one definition and reads no other file", async () => {
    const w = world();
    const userMarker = join(w.base, "user-started");
    const repoMarker = join(w.base, "repo-started");
    w.put(w.userConfig, { mcpServers: { github: goodCommand(userMarker) } });
    w.put(w.repoConfig, { mcpServers: { github: markerCommand(repoMarker) } });
    // A file that must not be read: a plain read of /dev/zero never ends.
    mkdirSync(join(w.repo, ".cursor"));
    symlinkSync("/dev/zero", join(w.repo, ".cursor", "mcp.json"));
    const picked = w.put(join(w.base, "picked.json"), { mcpServers: { github: goodCommand(userMarker) } });

    assertTools(await w.run(["tools", "github", "--json", "--config", w.userConfig]));
    assertTools(await w.run(["tools", "github", "--json", "--config", picked]));
    assert.equal(existsSync(userMarker), true);
    assert.equal(existsSync(repoMarker), false, "the repository's definition never started");

    const listing = await w.run(["servers", "--json", "--config", picked]);
    const doc = JSON.parse(listing.stdout) as { servers: { source: string }[]; errors: unknown[] };
    assert.deepEqual(
      doc.servers.map((s) => s.source),
      [picked],
    );
    assert.deepEqual(doc.errors, [], "no other file was read");

    // A broken --config file fails the listing itself.
    const broken = await w.run(["servers", "--config", join(w.repo, ".cursor", "mcp.json")]);
    assert.equal(broken.code, 2);
    assert.equal(record(broken).reason, "config_not_regular_file");
  });

  test("S3: the same definition in two files is not ambiguous", async () => {
    const w = world();
    w.put(w.userConfig, { mcpServers: { github: goodCommand() } });
    const { command, args } = goodCommand();
    w.put(w.repoConfig, { mcpServers: { github: { args, command } } });
    assertTools(await w.run(["tools", "github", "--json"]));
  });

  const hostile: [string, (path: string) => void, string][] = [
    ["a symlink to /dev/zero", (p) => symlinkSync("/dev/zero", p), "config_not_regular_file"],
    ["a FIFO", (p) => execFileSync("mkfifo", [p]), "config_not_regular_file"],
    [
      "a 2 GiB sparse file",
      (p) => {
        writeFileSync(p, "");
        truncateSync(p, 2 * 1024 * 1024 * 1024);
      },
      "config_too_large",
    ],
    [
      "a file of 1 MiB + 1 byte",
      (p) => {
        // Valid JSON that would make "good" ambiguous, were it read.
        const doc = JSON.stringify({ mcpServers: { good: { command: "evil" } } });
        writeFileSync(p, doc + " ".repeat(CONFIG_FILE_MAX_BYTES + 1 - doc.length));
      },
      "config_too_large",
    ],
  ];
  for (const [what, make, reason] of hostile) {
    test(`S3: a .mcp.json that is ${what} is refused unread: servers and another file's server finish promptly in bounded memory`, async () => {
      const w = world();
      w.put(w.userConfig, { mcpServers: { good: goodCommand() } });
      make(w.repoConfig);

      const listing = await w.run(["servers", "--json"]);
      assert.equal(listing.code, 0, listing.stderr);
      assert.ok(listing.elapsedMs < PROMPT_MS);
      assert.ok(listing.maxRssBytes < MAX_RSS_BYTES, `peak RSS ${listing.maxRssBytes} bytes`);
      const doc = JSON.parse(listing.stdout) as {
        servers: { name: string }[];
        errors: { file: string; reason: string }[];
      };
      assert.deepEqual(
        doc.servers.map((s) => s.name),
        ["good"],
      );
      assert.deepEqual(
        doc.errors.map((e) => [e.file, e.reason]),
        [[w.repoConfig, reason]],
      );

      const tools = await w.run(["tools", "good", "--json"]);
      assertTools(tools);
      assert.ok(tools.maxRssBytes < MAX_RSS_BYTES, `peak RSS ${tools.maxRssBytes} bytes`);
    });
  }

  test("S3: a file of exactly 1 MiB is read", async () => {
    const w = world();
    const doc = JSON.stringify({ mcpServers: { padded: goodCommand() } });
    w.put(w.repoConfig, doc + " ".repeat(CONFIG_FILE_MAX_BYTES - doc.length));
    assertTools(await w.run(["tools", "padded", "--json"]));
  });

  test("S3: a broken file breaks only the servers it defines", async () => {
    const w = world();
    w.put(w.userConfig, { mcpServers: { good: goodCommand(), bad: { command: "x", args: "not-a-list" } } });
    w.put(w.repoConfig, '{"mcpServers": {"repo-only": {"command": "x", "args": ["${env:CANARY}"]}');

    assertTools(await w.run(["tools", "good", "--json"]));

    const unknown = await w.run(["tools", "repo-only"]);
    assert.equal(unknown.code, 2);
    const r = record(unknown);
    assert.equal(r.reason, "unknown_server");
    assert.ok(String(r.message).includes(`${w.repoConfig} is not valid JSON`), String(r.message));

    const malformed = await w.run(["tools", "bad"]);
    assert.equal(malformed.code, 2);
    const m = record(malformed);
    assert.equal(m.reason, "invalid_config");
    assert.ok(String(m.message).includes("/.claude.json: mcpServers.bad.args"), String(m.message));
    assert.ok(!malformed.stderr.includes("not-a-list"), "the value is never quoted");

    const listing = await w.run(["servers", "--json"]);
    assert.equal(listing.code, 0);
    const doc = JSON.parse(listing.stdout) as {
      servers: { name: string }[];
      errors: { file: string; keyPath?: string }[];
    };
    assert.deepEqual(
      doc.servers.map((s) => s.name),
      ["good"],
    );
    assert.deepEqual(
      doc.errors.map((e) => [e.file, e.keyPath]),
      [
        [w.repoConfig, undefined],
        [w.userConfig, "mcpServers.bad"],
      ],
    );
  });

  test("S3: a name only the repository defines is refused while the user's own config is broken", async () => {
    const w = world();
    const repoMarker = join(w.base, "repo-started");
    symlinkSync("/dev/zero", w.userConfig);
    w.put(w.repoConfig, { mcpServers: { github: markerCommand(repoMarker) } });
    const run = await w.run(["tools", "github"]);
    assert.equal(run.code, 2);
    const r = record(run);
    assert.equal(r.reason, "ambiguous_server");
    assert.ok(String(r.message).includes("/.claude.json"), String(r.message));
    assert.equal(existsSync(repoMarker), false);
  });

  test("S3: an unset ${VAR} in an unrelated entry does not fail another name", async () => {
    const w = world();
    w.put(w.userConfig, {
      mcpServers: { other: { command: "x", args: ["${env:TETHER_TEST_UNSET_VAR}"] }, good: goodCommand() },
    });
    assertTools(await w.run(["tools", "good", "--json"]));
    const run = await w.run(["tools", "other"]);
    assert.equal(run.code, 2);
    const r = record(run);
    assert.equal(r.reason, "unset_variable");
    assert.ok(String(r.message).includes("mcpServers.other.args[0] uses ${TETHER_TEST_UNSET_VAR}"));
  });

  test("S4: servers --json and the table never show a configured secret, expanded or literal", async () => {
    const w = world();
    const literal = "lit-CANARY-0c4d2e8f19";
    w.put(w.userConfig, {
      mcpServers: {
        web: {
          url: `https://me:${literal}@h.example/mcp?key=\${env:CANARY}&k2=${literal}`,
          headers: { Authorization: "Bearer ${env:CANARY}", "X-Api-Key": literal },
        },
        local: {
          command: "node",
          args: [
            "server.js",
            "--token",
            "${env:CANARY}",
            `--key=${literal}`,
            `https://h.example/?t=${literal}`,
          ],
          env: { API_TOKEN: "${env:CANARY}", OTHER: literal },
        },
      },
    });
    w.put(w.repoConfig, { mcpServers: { web: { url: "https://h.example/mcp?key=${env:CANARY}" } } });
    for (const args of [["servers", "--json"], ["servers"], ["tools", "web"]]) {
      const run = await w.run(args);
      for (const secret of [CANARY, literal, "CANARY-"])
        assert.ok(
          !`${run.stdout}${run.stderr}`.includes(secret),
          `${args.join(" ")} shows ${secret}: ${run.stdout}${run.stderr}`,
        );
      if (args[0] === "servers") {
        assert.equal(run.code, 0);
        assert.match(run.stdout, /\$\{env:CANARY\}/, "references are shown unexpanded");
      }
    }
  });
});
