// `tether types`: declarations for every tool's input and output, type-checked with the project's
// TypeScript under --strict, for server-everything, the example fleet and a hostile server whose
// names, descriptions and schemas try to break out of comments, paste raw TypeScript, read files
// and fetch URLs.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { CLI_BIN, runCli } from "../helpers/cli.ts";
import { useFleet } from "../helpers/fleet.ts";
import { startStdioScript } from "../helpers/hostile.ts";

const dir = mkdtempSync(join(tmpdir(), "tether-types-"));
after(() => rmSync(dir, { recursive: true, force: true }));

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
let checks = 0;

/**
 * Type-checks the files as one program under --strict with the project's compiler (the `tsc`
 * command), together with a probe that imports `exported[file]` from each file: a name a file
 * does not export is a compile error like any other. Returns every diagnostic, readable.
 */
function typeCheck(files: string[], exported: Record<string, string[]> = {}, library = false): string[] {
  const out = join(dir, `check-${++checks}`);
  mkdirSync(out);
  const probe = join(out, "probe.ts");
  writeFileSync(
    probe,
    `${Object.entries(exported)
      .map(([file, names]) => `import type { ${names.join(", ")} } from ${JSON.stringify(file)};`)
      .join("\n")}\nexport {};\n`,
  );
  const config = join(out, "tsconfig.json");
  writeFileSync(
    config,
    JSON.stringify({
      compilerOptions: {
        strict: true,
        noEmit: true,
        target: "ES2022",
        module: "ESNext",
        moduleResolution: "Bundler",
        allowImportingTsExtensions: true,
        noUnusedLocals: false,
        // A program that uses the library compiles its sources too, which need Node's types.
        lib: library ? ["ES2023"] : ["ES2022"],
        types: library ? ["node"] : [],
        typeRoots: [join(root, "node_modules", "@types")],
      },
      files: [...files, probe],
    }),
  );
  const tsc = spawnSync(
    process.execPath,
    [join(root, "node_modules", "typescript", "bin", "tsc"), "-p", config],
    {
      encoding: "utf8",
    },
  );
  assert.equal(tsc.error, undefined);
  const errors = `${tsc.stdout}${tsc.stderr}`.split("\n").filter((line) => line.trim() !== "");
  if (errors.length === 0) assert.equal(tsc.status, 0, "tsc failed without a diagnostic");
  return errors;
}

/** The library's entry, for programs that use generated types with it. */
const LIBRARY = JSON.stringify(join(root, "src", "index.ts"));

/**
 * Type-checks `programs` (file name → text, written beside the generated files) with the library,
 * and returns each file's diagnostics as `line:TScode` (every diagnostic of a file not in
 * `programs` is returned whole under "other").
 */
function compileWithLibrary(files: string[], programs: Record<string, string>): Record<string, string[]> {
  const paths = Object.keys(programs).map((name) => {
    const file = join(dir, name);
    writeFileSync(file, programs[name]!);
    return file;
  });
  const found: Record<string, string[]> = Object.fromEntries(Object.keys(programs).map((n) => [n, []]));
  for (const line of typeCheck([...files, ...paths], {}, true)) {
    const m = /^(.*?)\((\d+),\d+\): error (TS\d+)/.exec(line);
    const name = m ? m[1]!.slice(m[1]!.lastIndexOf("/") + 1) : undefined;
    if (m && name !== undefined && name in found) found[name]!.push(`${m[2]}:${m[3]}`);
    else if (!line.startsWith(" ")) found.other = [...(found.other ?? []), line];
  }
  return found;
}

/**
 * The identifiers of a TypeScript text: what is left once comments and string literals are
 * skipped (the generated files hold no template literals or regular expressions).
 */
function identifiersOf(text: string): Set<string> {
  let code = "";
  for (let i = 0; i < text.length; ) {
    const two = text.slice(i, i + 2);
    if (two === "//") {
      const end = text.indexOf("\n", i);
      i = end < 0 ? text.length : end;
    } else if (two === "/*") {
      const end = text.indexOf("*/", i + 2);
      assert.ok(end >= 0, "a comment that never closes");
      i = end + 2;
      code += " ";
    } else if (text[i] === '"' || text[i] === "'" || text[i] === "`") {
      const quote = text[i]!;
      assert.notEqual(quote, "`", "no template literal in generated declarations");
      let j = i + 1;
      while (j < text.length && text[j] !== quote) {
        assert.notEqual(text[j], "\n", "a string literal that runs past its line");
        j += text[j] === "\\" ? 2 : 1;
      }
      assert.ok(j < text.length, "a string literal that never closes");
      i = j + 1;
      code += " ";
    } else code += text[i++];
  }
  return new Set(code.match(/[A-Za-z_$][\w$]*/g) ?? []);
}

/** Characters that must never be raw in the file: C0 (but LF), DEL, C1, bidi controls, LS/PS. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const RAW_UNSAFE = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

describe("types for real servers", () => {
  const fleet = useFleet();

  /** Each server's declarations, written once by the CLI for the tests below. */
  let written: Promise<string[]> | undefined;
  const generated = () => {
    written ??= (async () => {
      const targets: { label: string; args: string[] }[] = [
        ...fleet().servers.map((srv) => ({ label: srv.name, args: [srv.url] })),
        ...fleet().stdio.map((srv) => ({ label: srv.name, args: ["--", srv.command, ...srv.args] })),
      ];
      // One CLI run per server, side by side: each spawns, lists and generates on its own.
      return await Promise.all(
        targets.map(async (t) => {
          const file = join(dir, `${t.label}.ts`);
          // With a stdio target every option comes before --.
          const args =
            t.args[0] === "--" ? ["types", "-o", file, ...t.args] : ["types", ...t.args, "-o", file];
          const run = await runCli(args, { timeoutMs: 60_000 });
          assert.equal(run.code, 0, `${t.label}: ${run.stderr}`);
          assert.equal(run.stdout, "", `${t.label}: with -o, stdout is empty`);
          assert.equal(run.stderr, "");
          return file;
        }),
      );
    })();
    return written;
  };

  test("K1: types for server-everything and every fleet server compile under --strict, and the types mean what the schemas say", async () => {
    const files = await generated();
    // A use of the generated types: right arguments compile, wrong ones do not.
    const use = join(dir, "use.ts");
    writeFileSync(
      use,
      `import type { EchoInput, GetSumInput, GetStructuredContentOutput, Tools } from "./everything-stdio.ts";
const echo: EchoInput = { message: "hi" };
const sum: Tools["get-sum"]["input"] = { a: 2, b: 3 };
// @ts-expect-error a is a number
const wrong: GetSumInput = { a: "2", b: 3 };
// @ts-expect-error message is required
const missing: EchoInput = {};
const weather: GetStructuredContentOutput = { temperature: 20, conditions: "sunny", humidity: 40 };
export { echo, sum, wrong, missing, weather };
`,
    );
    // Every file compiles, and server-everything's declares the types its tools need.
    const errors = typeCheck([...files, use], {
      [join(dir, "everything-stdio.ts")]: [
        "Tools",
        "EchoInput",
        "GetSumInput",
        "GetStructuredContentInput",
        "GetStructuredContentOutput",
      ],
    });
    assert.deepEqual(errors, []);
  });

  test("K1: generated types fit the library: every Input goes to callTool as it is, and typedTools checks names, arguments and outputs at compile time", async () => {
    const files = await generated();
    const everything = JSON.stringify(join(dir, "everything-stdio.ts"));
    const head = `import { type Client, typedTools } from ${LIBRARY};
import type { GetStructuredContentOutput, GetSumInput, Tools } from ${everything};
declare const client: Client;
const tools = typedTools<Tools>(client);
`;
    // Every server's Tools map fits typedTools, and each of its inputs fits callTool.
    const fleetUse = files
      .map((file, i) => {
        const from = JSON.stringify(file);
        return `import type { Tools as Tools${i} } from ${from};
export const view${i} = typedTools<Tools${i}>(client);
export const call${i} = (args: Tools${i}[keyof Tools${i}]["input"]) => client.callTool("any", args);`;
      })
      .join("\n");
    const programs: Record<string, string> = {
      "fit.ts": `${head}${fleetUse}
export async function use(): Promise<number> {
  const args: GetSumInput = { a: 2, b: 3 };
  await client.callTool("get-sum", args);
  await client.callTool("get-sum", args, { timeoutMs: 1000 });
  const raw = await client.callTool("get-structured-content", { location: "Chicago" });
  const cast = raw.structuredContent as GetStructuredContentOutput;
  const sum = await tools.call("get-sum", { a: 2, b: 3 });
  const content: string | undefined = sum.content[0]?.type;
  const weather = await tools.call("get-structured-content", { location: "Chicago" }, { timeoutMs: 1000 });
  const temperature: number | undefined = weather.structuredContent?.temperature;
  await tools.call("get-env");
  await tools.call("echo", { message: "hi" });
  return cast.humidity + (temperature ?? 0) + (content === undefined ? 0 : 1);
}
`,
      // Each mutation breaks one line (the last); nothing else in its file may fail.
      "wrong-name.ts": `${head}export const p = tools.call("get-summ", { a: 2, b: 3 });\n`,
      "wrong-type.ts": `${head}export const p = tools.call("get-sum", { a: "2", b: 3 });\n`,
      "missing-argument.ts": `${head}export const p = tools.call("get-sum", { a: 2 });\n`,
      "no-arguments.ts": `${head}export const p = tools.call("echo");\n`,
      "unknown-argument.ts": `${head}export const p = tools.call("get-sum", { a: 2, b: 3, c: 4 });\n`,
      "wrong-enum.ts": `${head}export const p = tools.call("get-structured-content", { location: "Paris" });\n`,
      "wrong-output.ts": `${head}export const f = async () => { const t: string | undefined = (await tools.call("get-structured-content", { location: "Chicago" })).structuredContent?.temperature; return t; };\n`,
      "not-json.ts": `${head}export const p = client.callTool("get-sum", { a: 2, b: () => 3 });\n`,
    };
    const found = compileWithLibrary(files, programs);
    const last = String(head.split("\n").length);
    assert.deepEqual(found, {
      "fit.ts": [],
      "wrong-name.ts": [`${last}:TS2345`],
      "wrong-type.ts": [`${last}:TS2322`],
      "missing-argument.ts": [`${last}:TS2741`],
      "no-arguments.ts": [`${last}:TS2554`],
      "unknown-argument.ts": [`${last}:TS2353`],
      "wrong-enum.ts": [`${last}:TS2322`],
      "wrong-output.ts": [`${last}:TS2322`],
      "not-json.ts": [`${last}:TS2322`],
    });
  });
});

test("K1: whatever a schema leaves open is JSON, never unknown, so every input fits callTool and typedTools", async () => {
  const { toolTypes } = await import("../../src/cli/types-command.ts");
  const { declarations } = await toolTypes([
    {
      name: "open",
      inputSchema: {
        type: "object",
        properties: { a: { type: "number" }, tags: { type: "array", items: { type: "string" } } },
        additionalProperties: true,
      },
      outputSchema: { type: "object", properties: { any: {}, list: { type: "array" } } },
    },
    {
      name: "map",
      inputSchema: {
        type: "object",
        properties: { env: { type: "object", additionalProperties: { type: "string" } } },
        required: ["env"],
      },
    },
    {
      name: "anything",
      inputSchema: {
        type: "object",
        properties: {
          x: {},
          list: { type: "array" },
          pair: { type: "array", items: [{ type: "string" }] },
          bag: { type: "object" },
          nowhere: { $ref: "#/properties/elsewhere" },
        },
      },
    },
    { name: "ref-root", inputSchema: { $ref: "#/$defs/A", $defs: { A: { type: "object" } } } },
    { name: "string-root", inputSchema: { type: "string" } },
    { name: "enum-root", inputSchema: { enum: ["a"] } },
    { name: "no-type", inputSchema: { properties: { q: { type: "string" } }, required: ["q"] } },
  ]);
  assert.ok(!identifiersOf(declarations).has("unknown"), declarations);
  const file = join(dir, "open.ts");
  writeFileSync(file, declarations);
  const head = `import { type Client, typedTools } from ${LIBRARY};
import type { OpenInput, Tools } from ${JSON.stringify(file)};
declare const client: Client;
const tools = typedTools<Tools>(client);
`;
  const found = compileWithLibrary([file], {
    "open-fit.ts": `${head}const open: OpenInput = { a: 1, more: { deep: [1, "x", null] } };
export const calls = [
  client.callTool("open", open),
  client.callTool("open", { tags: ["x"] } as const),
  tools.call("open", { a: 1, extra: "x" }),
  tools.call("map", { env: { HOME: "/home" } }),
  tools.call("anything", { x: [1, { y: null }], list: ["a", 2], pair: ["a", 3], bag: { k: true } }),
  tools.call("ref-root", { anything: 1 }),
  tools.call("string-root", { anything: 1 }),
  tools.call("enum-root"),
  tools.call("no-type", { q: "x" }),
];
export const out = async () => (await tools.call("open")).structuredContent?.list?.[0];
`,
    "open-not-json.ts": `${head}export const p = tools.call("anything", { x: () => 1 });\n`,
    "open-map.ts": `${head}export const p = tools.call("map", { env: { HOME: 1 } });\n`,
    "open-no-type.ts": `${head}export const p = tools.call("no-type", { q: "x", r: 1 });\n`,
  });
  const last = String(head.split("\n").length);
  assert.deepEqual(found, {
    "open-fit.ts": [],
    "open-not-json.ts": [`${last}:TS2322`],
    "open-map.ts": [`${last}:TS2322`],
    "open-no-type.ts": [`${last}:TS2353`],
  });
});

describe("types for a hostile server", () => {
  /** Any request here means an external $ref was fetched. */
  let fetched = 0;
  const web = createServer((_req, res) => {
    fetched++;
    res.end(JSON.stringify({ description: "FETCHED-SENTINEL", type: "string" }));
  });
  const listening = new Promise<void>((resolve) => web.listen(0, "127.0.0.1", resolve));
  after(() => web.close());
  const secretFile = join(dir, "secret.json");
  writeFileSync(secretFile, JSON.stringify({ description: "FILE-SENTINEL", type: "string" }));

  const evil = "x */ declare const pwned: 1; /* \u202e\u0007\u001b[31m\u2028\u0085 end";
  const tools = async () => {
    await listening;
    const port = (web.address() as AddressInfo).port;
    return [
      {
        name: "get-sum",
        description: `Adds. ${evil}`,
        inputSchema: {
          type: "object",
          title: "Injected*/Title",
          properties: {
            a: { type: "number", description: evil },
            b: { type: "number", tsType: "string; export declare const pwned2: 2" },
            [evil]: { enum: ["x", evil, 3, null] },
            mode: { tsEnumNames: ["A*/B"], enum: ["a"] },
            item: { $ref: "#/$defs/Item" },
            self: { $ref: "#" },
            fromFile: { $ref: `file://${secretFile}` },
            fromWeb: { $ref: `http://127.0.0.1:${port}/schema.json` },
            relative: { $ref: "secret.json" },
            dangling: { $ref: "#/properties/nope" },
            notASchema: { $ref: "#/required" },
          },
          patternProperties: { "*/ declare const pwned3: 3; /*": { type: "string" } },
          required: ["a"],
          $defs: {
            Item: {
              type: "object",
              $id: "Evil*/Id",
              properties: { z: { $ref: `#/$defs/${encodeURIComponent(evil)}` } },
            },
            [evil]: { type: "string", description: evil },
          },
        },
        outputSchema: { type: "object", properties: { sum: { type: "number" } }, required: ["sum"] },
      },
      { name: "get_sum", description: "*/", inputSchema: { type: "object" } },
      {
        name: "getSum",
        inputSchema: JSON.parse('{"type":"object","properties":{"__proto__":{"type":"string"}}}') as object,
      },
      { name: evil, description: evil, inputSchema: { type: "object", properties: { deep: deep(40) } } },
      { name: "123", inputSchema: { type: "object" } },
      { name: "日本語", inputSchema: { type: "object" } },
      { name: "tools", inputSchema: { type: "object" } },
      // Names the generator itself trips over (it calls hasOwnProperty on the maps it walks), and
      // references that only ever lead to each other.
      {
        name: "hasOwnProperty",
        inputSchema: {
          type: "object",
          properties: {
            hasOwnProperty: { type: "string" },
            x: { $ref: "#/properties/y" },
            y: { $ref: "#/properties/x" },
          },
          required: ["hasOwnProperty"],
        },
      },
      { name: "loop", inputSchema: { $ref: "#" } },
    ];
  };
  /** A schema nested `n` levels deep. */
  function deep(n: number): Record<string, unknown> {
    let s: Record<string, unknown> = { type: "string" };
    for (let i = 0; i < n; i++) s = { type: "object", properties: { d: s } };
    return s;
  }

  const server = (async () => {
    const list = await tools();
    return startStdioScript(`
const TOOLS = JSON.parse(${JSON.stringify(JSON.stringify(list))});
onMessage((m) => {
  if (m.method === "initialize") return send({ jsonrpc: "2.0", id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: "h", version: "1" } } });
  if (m.method === "tools/list") return send({ jsonrpc: "2.0", id: m.id, result: { tools: TOOLS } });
  if (m.id !== undefined) send({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "no" } });
});`);
  })();
  after(async () => (await server).dispose());

  test("S1: hostile names, descriptions and schemas give a file that compiles under --strict and declares only the tools' types", async () => {
    const s = await server;
    const run = await runCli(["types", "--json", "--", s.command, ...s.args]);
    assert.equal(run.code, 0, run.stderr);
    const doc = JSON.parse(run.stdout) as {
      declarations: string;
      tools: { name: string; input: string; output: string | null }[];
    };
    const text = doc.declarations;
    const file = join(dir, "hostile.ts");
    writeFileSync(file, text);
    assert.doesNotMatch(text, RAW_UNSAFE, "no raw control or bidirectional characters");
    // Type names come from tool names: valid, unique, in the server's order.
    assert.deepEqual(
      doc.tools.map((t) => [t.input, t.output]),
      [
        ["GetSumInput", "GetSumOutput"],
        ["GetSum2Input", null],
        ["GetSum3Input", null],
        [doc.tools[3]!.input, null],
        ["ToolInput", null],
        ["Tool2Input", null],
        ["ToolsInput", null],
        ["HasOwnPropertyInput", null],
        ["LoopInput", null],
      ],
    );
    assert.equal(doc.tools[3]!.name, evil);
    assert.match(doc.tools[3]!.input, /^XDeclareConstPwned[A-Za-z0-9]*Input$/);
    // It compiles, and it exports every tool's input type, the output one and the Tools map.
    const errors = typeCheck([file], { [file]: [...doc.tools.map((t) => t.input), "Tools", "GetSumOutput"] });
    assert.deepEqual(errors, []);
    // Even so, its Tools map fits typedTools and every input fits callTool.
    const fit = compileWithLibrary([file], {
      "hostile-fit.ts": `import { type Client, typedTools } from ${LIBRARY};
import type { Tools } from ${JSON.stringify(file)};
declare const client: Client;
export const view = typedTools<Tools>(client);
export const call = (args: Tools[keyof Tools]["input"]) => client.callTool("any", args);
`,
    });
    assert.deepEqual(fit, { "hostile-fit.ts": [] });
    // Nothing the server wrote left its comment or string: no identifier of its making in the code.
    const identifiers = identifiersOf(text);
    for (const injected of ["pwned", "pwned2", "pwned3", "declare"])
      assert.ok(!identifiers.has(injected), injected);
    assert.doesNotMatch(
      text,
      /A\*\/B|Evil\*\/Id|Injected\*\/Title/,
      "tsEnumNames, $id, titles never close a comment",
    );
    // External references are never followed: nothing read from disk, nothing fetched.
    assert.doesNotMatch(text, /SENTINEL/);
    assert.match(text, /"hasOwnProperty": string;/);
    assert.match(text, /"__proto__"\?: string;/);
    assert.equal(fetched, 0);
    // The hostile strings survive exactly, as escapes inside string literals.
    assert.ok(
      text.includes(
        JSON.stringify(evil).replace(
          /[\u0085\u2028\u202e]/g,
          (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
        ),
      ),
    );
  });

  test("K1: types -o FILE writes the declarations and leaves stdout empty; with --json stdout has the names", async () => {
    const s = await server;
    const whole = await runCli(["types", "--", s.command, ...s.args]);
    assert.equal(whole.code, 0, whole.stderr);
    assert.match(whole.stdout, /export interface Tools \{/);
    const file = join(dir, "written.ts");
    const written = await runCli(["types", "-o", file, "--", s.command, ...s.args]);
    assert.equal(written.code, 0, written.stderr);
    assert.equal(written.stdout, "");
    assert.equal(readFileSync(file, "utf8"), whole.stdout);
    const named = await runCli(["types", "--json", "-o", file, "--", s.command, ...s.args]);
    assert.equal(named.code, 0, named.stderr);
    assert.deepEqual(Object.keys(JSON.parse(named.stdout) as object), ["tools"]);
  });

  test("K1: types takes only a target; other commands never load the generator", async () => {
    const s = await server;
    const extra = await runCli(["types", "more", "--", s.command, ...s.args]);
    assert.equal(extra.code, 2);
    // The generator is loaded with a dynamic import, only by this command: no file of the CLI
    // (the entry and the chunks it loads on demand) imports it statically.
    const chunks = join(dirname(CLI_BIN), "tether-chunks");
    const files = [CLI_BIN, ...(existsSync(chunks) ? readdirSync(chunks).map((f) => join(chunks, f)) : [])];
    const code = files.map((f) => readFileSync(f, "utf8"));
    assert.ok(code.some((c) => /import\(\s*["']json-schema-to-typescript["']\s*\)/.test(c)));
    for (const c of code) assert.doesNotMatch(c, /from\s*["']json-schema-to-typescript["']/);
  });
});
