// Type names from tool names, and a schema the generator cannot take: that tool takes any JSON
// arguments, the others keep their types.
import assert from "node:assert/strict";
import { test } from "node:test";
import { identifierOf, loadGenerator, toolTypes } from "./types-command.ts";

test("K1: tool names become PascalCase ASCII identifiers the generator keeps as they are", () => {
  const cases: [name: string, identifier: string][] = [
    ["get-sum", "GetSum"],
    ["get_sum", "GetSum"],
    ["fetch2url", "Fetch2Url"],
    ["3d-render", "DRender"],
    ["café", "Cafe"],
    ["日本語", "Tool"],
    ["*/ \u202e", "Tool"],
  ];
  for (const [name, identifier] of cases) assert.equal(identifierOf(name), identifier, name);
  assert.equal(identifierOf("", "Definition"), "Definition");
});

test("S1: a tool whose schema the generator refuses takes any JSON arguments; the other tools keep theirs", async () => {
  const real = await loadGenerator();
  const refusing = async (document: object) => {
    if (JSON.stringify(document).includes("poison-key")) throw new Error("the generator gave up");
    return real(document);
  };
  const { declarations, tools } = await toolTypes(
    [
      {
        name: "fine",
        inputSchema: { type: "object", properties: { a: { type: "number" } }, required: ["a"] },
      },
      { name: "poisoned", inputSchema: { type: "object", properties: { "poison-key": { type: "string" } } } },
    ],
    refusing,
  );
  assert.deepEqual(tools, [
    { name: "fine", input: "FineInput", output: null },
    { name: "poisoned", input: "PoisonedInput", output: null },
  ]);
  assert.match(declarations, /export type FineInput = \{\n {2}a: number;\n\};/);
  assert.match(
    declarations,
    /"poisoned"\. Its schema could not be converted\.\n \*\/\nexport type PoisonedInput = \{\n {2}\[k: string\]: Json;\n\};/,
  );
  assert.ok(!declarations.includes("poison-key"));
});
