// Arguments and schemas, all the way: array item types and annotations in the tools table,
// `tether tool` (one tool in full, with an example call that runs), "did you mean" for a
// misspelled enum member, `prompt` arguments checked before prompts/get, and on a terminal a hint
// that names the command showing the tool's schema after an argument error or a tool error.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { fileURLToPath } from "node:url";
import { CLI_BIN, errorRecord, hasScript, inTerminal, runCli, runProcess } from "../helpers/cli.ts";

const SERVER = fileURLToPath(new URL("../fixtures/schemas/server.mjs", import.meta.url));
const STDIO = ["--", process.execPath, SERVER];
const dir = mkdtempSync(join(tmpdir(), "tether-schemas-"));
after(() => rmSync(dir, { recursive: true, force: true }));

test("K1: the tools table shows array item types and the annotations each tool declares", async () => {
  const run = await runCli(["tools", ...STDIO]);
  assert.equal(run.code, 0, run.stderr);
  const rows = run.stdout.split("\n");
  assert.match(rows[0]!, /^TOOL +ANNOTATIONS +DESCRIPTION$/);
  const row = (name: string) => rows.find((r) => r.startsWith(`${name}(`)) ?? "";
  assert.match(row("read_files"), /^read_files\(paths: string\[\]\) +read-only +Reads several files\.$/);
  assert.match(
    row("create_entities"),
    /^create_entities\(entities: \{name, …\}\[\]\) +destructive, open-world +Creates/,
  );
  assert.match(
    row("set_level"),
    /level: "debug"\|"info"\|"warning"\|"error", note: string\) +idempotent +Sets/,
  );
  assert.match(row("fail"), /^fail\(\) +Always fails\.$/, "no annotations, no hints");
});

test("K1: tool shows one tool in full, and its example call line runs as it is", async () => {
  const run = await runCli(["tool", "create_entities", ...STDIO]);
  assert.equal(run.code, 0, run.stderr);
  const out = run.stdout;
  assert.match(
    out,
    /^create_entities\(entities: \{name, …\}\[\]\)\ntitle: Create entities\n\nCreates entities in the graph\.\n/,
  );
  assert.match(out, /\nannotations: destructive, open-world\n/);
  assert.match(out, /\ninput schema:\n {2}\{\n {4}"type": "object",/);
  assert.match(out, /\noutput schema:\n {2}\{\n[\s\S]*"created"/);
  const example = /\nexample:\n {2}(tether call .*)\n$/.exec(out)?.[1];
  assert.ok(example, out);
  assert.ok(example.startsWith("tether call create_entities 'entities:=[{"), example);
  assert.ok(example.endsWith(` -- ${process.execPath} ${SERVER}`), example);
  // The line is for a shell: run it through one, with the built CLI in place of `tether`.
  const called = execFileSync(
    "sh",
    ["-c", `tether() { ${JSON.stringify(process.execPath)} ${JSON.stringify(CLI_BIN)} "$@"; }; ${example}`],
    {
      encoding: "utf8",
      timeout: 20_000,
    },
  );
  assert.equal(called, "created 1\n");
  const none = await runCli(["tool", "fail", ...STDIO]);
  assert.match(none.stdout, /\nannotations: \(none declared\)\n[\s\S]*\noutput schema: \(none declared\)\n/);
});

test("K1: tool --json is the tool object as the server sent it", async () => {
  const [one, all] = await Promise.all([
    runCli(["tool", "set_level", "--json", ...STDIO]),
    runCli(["tools", "--json", ...STDIO]),
  ]);
  assert.equal(one.code, 0, one.stderr);
  const tools = (JSON.parse(all.stdout) as { tools: { name: string }[] }).tools;
  assert.deepEqual(
    JSON.parse(one.stdout),
    tools.find((t) => t.name === "set_level"),
  );
});

test("K1: tool with an unknown name is call's config error, with the closest names", async () => {
  const run = await runCli(["tool", "read_file", ...STDIO]);
  assert.equal(run.code, 2);
  const record = errorRecord(run);
  assert.equal(record.reason, "unknown_tool");
  assert.match(String(record.message), /no tool named "read_file" \(did you mean read_files\?\)/);
});

test("K1: a misspelled enum member is refused before the call, with the closest members", async () => {
  const run = await runCli(["call", "set_level", "level=warnin", "note=x", ...STDIO]);
  assert.equal(run.code, 2);
  const record = errorRecord(run);
  assert.equal(record.reason, "invalid_argument");
  assert.match(
    String(record.message),
    /level takes "debug"\|"info"\|"warning"\|"error", and the value given does not fit \(did you mean warning\?\)/,
  );
});

test("K1: prompt checks its arguments against the declared ones before prompts/get", async () => {
  const log = join(dir, "prompts.log");
  const env = ["-e", `TETHER_PROMPT_LOG=${log}`];
  const cases: [string[], string, RegExp][] = [
    [
      ["greet", "nme=Ada"],
      "unknown_argument",
      /greet has no argument "nme" \(did you mean name\?\); its arguments: name, style/,
    ],
    [["greet", "style=warm"], "missing_argument", /greet needs name \(required: name\)/],
  ];
  for (const [args, reason, message] of cases) {
    const run = await runCli(["prompt", ...args, ...env, ...STDIO]);
    assert.equal(run.code, 2, run.stderr);
    const record = errorRecord(run);
    assert.equal(record.reason, reason);
    assert.match(String(record.message), message);
  }
  assert.equal(existsSync(log), false, "no prompts/get was sent");
  const ok = await runCli(["prompt", "greet", "name=Ada", "style=warm", ...env, ...STDIO]);
  assert.equal(ok.code, 0, ok.stderr);
  assert.equal(ok.stdout, "user: Hello Ada (warm)\n");
  assert.equal(readFileSync(log, "utf8"), "greet\n");
});

/** `tether shell` on the fixture with `lines` piped in: records on stderr, one per failing line. */
async function shellLines(lines: string[], env: string[] = []) {
  const run = await runProcess(process.execPath, [CLI_BIN, "shell", ...env, ...STDIO], {
    env: { ...process.env, NO_COLOR: "1" },
    timeoutMs: 20_000,
    name: "tether shell",
    input: `${lines.join("\n")}\n`,
  });
  assert.equal(run.code, 0, run.stderr);
  const records = run.stderr
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  return { stdout: run.stdout, records };
}

test("K1: the shell's tool NAME renders as tether tool does, with the shell's own call line that runs as it is", async () => {
  const shown = await shellLines(["tool create_entities", "tool create_entitis"]);
  const oneShot = await runCli(["tool", "create_entities", ...STDIO]);
  const body = (text: string) => text.slice(0, text.indexOf("\nexample:\n"));
  assert.ok(shown.stdout.includes("\nexample:\n"), shown.stdout);
  assert.equal(body(shown.stdout), body(oneShot.stdout), "the same rendering as tether tool");
  const example = /\nexample:\n {2}(call .*)\n/.exec(shown.stdout)?.[1];
  assert.ok(example?.startsWith("call create_entities 'entities:=[{"), shown.stdout);
  assert.equal(shown.records.length, 1);
  assert.equal(shown.records[0]!.reason, "unknown_tool");
  assert.match(String(shown.records[0]!.message), /create_entities/, "the closest name is suggested");
  const called = await shellLines([String(example)]);
  assert.deepEqual([called.stdout, called.records], ["created 1\n", []]);
});

test("K1: the shell's prompt checks its arguments like the one-shot prompt; an unlisted prompt goes as written", async () => {
  const log = join(dir, "shell-prompts.log");
  const r = await shellLines(
    ["prompt greet nme=Ada", "prompt greet style=warm", "prompt greet name=Ada", "prompt unlisted x=1"],
    ["-e", `TETHER_PROMPT_LOG=${log}`],
  );
  assert.deepEqual(
    r.records.map((x) => [x.code, x.reason]),
    [
      ["config", "unknown_argument"],
      ["config", "missing_argument"],
    ],
  );
  assert.match(String(r.records[0]!.message), /greet has no argument "nme" \(did you mean name\?\)/);
  assert.match(String(r.records[1]!.message), /greet needs name \(required: name\)/);
  assert.equal(r.stdout, "user: Hello Ada\nuser: Hello undefined\n");
  assert.equal(
    readFileSync(log, "utf8"),
    "greet\nunlisted\n",
    "only the fitting and the unlisted prompt were sent",
  );
});

test("K1: on a terminal an argument error's hint names the command that shows the tool's schema", {
  skip: !hasScript && "no script(1)",
}, () => {
  const out = inTerminal(["call", "set_level", "level=warnin", "note=x", ...STDIO]);
  assert.match(
    out,
    /^error: set_level: level takes .*did you mean warning\?.*\[config\/invalid_argument at config, discovery\]\n/,
  );
  assert.ok(
    out.includes(`\nhint: tether tool set_level -- ${process.execPath} ${SERVER} shows its schema\nexit=2\n`),
    out,
  );
  const missing = inTerminal(["call", "read_files", ...STDIO]);
  assert.match(missing, /\nhint: tether tool read_files -- .* shows its schema\nexit=2\n/);
  const prompt = inTerminal(["prompt", "greet", "nme=x", ...STDIO]);
  assert.match(prompt, /\nhint: tether prompts -- .* lists each prompt's arguments\nexit=2\n/);
});

test("K1: on a terminal a tool error is followed by the same hint; off a terminal stderr stays empty", {
  skip: !hasScript && "no script(1)",
}, async () => {
  const out = inTerminal(["call", "fail", ...STDIO]);
  assert.match(out, /^it failed\nhint: tether tool fail -- .* shows its schema\nexit=1\n$/);
  const piped = await runCli(["call", "fail", ...STDIO]);
  assert.equal(piped.code, 1);
  assert.equal(piped.stdout, "it failed\n");
  assert.equal(piped.stderr, "");
});

test("K1: --help lists tool, and tool --help shows its usage", async () => {
  const help = await runCli(["--help"]);
  assert.match(help.stdout, /\n {2}tether tool {3}<target> <name> \[options\] +one tool: /);
  const own = await runCli(["tool", "--help"]);
  assert.match(own.stdout, /^Usage: tether tool <target> <name> \[options\]\n/);
});
