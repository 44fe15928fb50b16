// `mcp-tether/ai` in the AI SDK's own loop: `generateText` with the SDK's mock model (`ai/test`)
// against server-everything and a recording server. The model's second call is where a tool's
// result (or failure) shows up, so that is what each test reads. Events are waited for, never
// slept for.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { generateText, stepCountIs, type ToolSet } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { type Client, TetherError } from "../../src/index.ts";
import { aiTools, TetherToolError } from "../../src/integrations/ai.ts";
import { assertNoLeak } from "../helpers/canaries.ts";
import { EVERYTHING, event, logged, RECORDING, withClient } from "../helpers/integrations.ts";

type CallOptions = MockLanguageModelV4["doGenerateCalls"][number];
type Generated = Awaited<ReturnType<MockLanguageModelV4["doGenerate"]>>;

const usage: Generated["usage"] = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};

function toolCall(toolName: string, input: object): Generated {
  return {
    content: [{ type: "tool-call", toolCallId: "call-1", toolName, input: JSON.stringify(input) }],
    finishReason: { unified: "tool-calls", raw: undefined },
    usage,
    warnings: [],
  };
}

function answer(text: string): Generated {
  return {
    content: [{ type: "text", text }],
    finishReason: { unified: "stop", raw: undefined },
    usage,
    warnings: [],
  };
}

/** A model that asks for one tool, then answers. */
function scripted(toolName: string, input: object): MockLanguageModelV4 {
  return new MockLanguageModelV4({
    doGenerate: async (options) =>
      options.prompt.some((m) => m.role === "tool") ? answer("done") : toolCall(toolName, input),
  });
}

/** The tool results (and tool errors) the model was shown in one call, as the SDK put them. */
function toolOutputs(
  call: CallOptions | undefined,
): { toolName: string; output: { type: string; value?: unknown } }[] {
  assert.ok(call, "the model was called again after the tool ran");
  return call.prompt.flatMap((m) =>
    m.role === "tool"
      ? m.content.flatMap((p) =>
          p.type === "tool-result" ? [{ toolName: p.toolName, output: p.output }] : [],
        )
      : [],
  );
}

const withEverything = (fn: (client: Client) => Promise<void>) => withClient(EVERYTHING, fn);
const withRecording = (fn: (client: Client) => Promise<void>) => withClient(RECORDING, fn);

describe("mcp-tether/ai", { concurrency: true }, () => {
  test("the model asks for get-sum and the sum flows back into its next step", async () => {
    await withEverything(async (client) => {
      const tools = await aiTools(client);
      const model = scripted("get-sum", { a: 2, b: 3 });
      const result = await generateText({ model, tools, prompt: "2 + 3?", stopWhen: stepCountIs(3) });
      assert.equal(result.text, "done");
      // The first call offered the tool with its description and input schema.
      const offered = model.doGenerateCalls[0]?.tools?.find((t) => t.name === "get-sum");
      assert.ok(offered && offered.type === "function", "get-sum was offered to the model");
      assert.equal(offered.description, "Returns the sum of two numbers");
      assert.deepEqual(Object.keys((offered.inputSchema as { properties: object }).properties).sort(), [
        "a",
        "b",
      ]);
      // The second call saw the sum.
      assert.deepEqual(toolOutputs(model.doGenerateCalls[1]), [
        {
          toolName: "get-sum",
          output: { type: "content", value: [{ type: "text", text: "The sum of 2 and 3 is 5." }] },
        },
      ]);
    });
  });

  test("a tool that outlives its call budget comes back to the model as an error, in bounded time", async () => {
    await withEverything(async (client) => {
      const tools = await aiTools(client, { call: { timeoutMs: 300 } });
      const model = scripted("trigger-long-running-operation", { duration: 30, steps: 3 });
      const started = performance.now();
      const result = await generateText({ model, tools, prompt: "run it", stopWhen: stepCountIs(3) });
      // The operation takes 30 s; the budget ends it at 300 ms (10 s allows for a loaded machine).
      assert.ok(
        performance.now() - started < 10_000,
        "generateText returned well before the tool would have",
      );
      const [seen] = toolOutputs(model.doGenerateCalls[1]);
      assert.equal(seen?.output.type, "error-text");
      assert.match(String(seen?.output.value), /timeout/);
      assert.match(String(seen?.output.value), /300 ms/);
      const failure = result.steps[0]?.content.find((p) => p.type === "tool-error");
      assert.ok(failure?.type === "tool-error" && failure.error instanceof TetherToolError);
      assert.equal(failure.error.code, "timeout");
      assert.equal(failure.error.cause, undefined, "the TetherError behind it stays out of the tool error");
    });
  });

  test("a tool's own failure (isError) is the result the model sees, not a thrown error", async () => {
    await withRecording(async (client) => {
      const tools = await aiTools(client);
      const model = scripted("refuse", {});
      const result = await generateText({ model, tools, prompt: "try", stopWhen: stepCountIs(3) });
      assert.deepEqual(toolOutputs(model.doGenerateCalls[1]), [
        { toolName: "refuse", output: { type: "error-text", value: "the file is locked" } },
      ]);
      const kinds = result.steps[0]?.content.map((p) => p.type);
      assert.ok(kinds?.includes("tool-result") && !kinds.includes("tool-error"), `${kinds}`);
    });
  });

  test("a failed call shows the model the public code and tether's words, never the server's text", async () => {
    await withRecording(async (client) => {
      // The server's error text carries the canary; the client keeps it in rpcMessage (so it was there).
      const direct = await client.callTool("fail").catch((e: unknown) => e);
      assert.ok(
        TetherError.is(direct) && direct.rpcMessage?.includes("CANARY"),
        "the server's text carried the canary",
      );
      const tools = await aiTools(client);
      const model = scripted("fail", {});
      const result = await generateText({ model, tools, prompt: "try", stopWhen: stepCountIs(3) });
      const [seen] = toolOutputs(model.doGenerateCalls[1]);
      assert.equal(seen?.output.type, "error-text");
      assert.match(String(seen?.output.value), /remote_error/);
      assertNoLeak(JSON.stringify(model.doGenerateCalls), "what the model was shown");
      const failure = result.steps[0]?.content.find((p) => p.type === "tool-error");
      assert.ok(failure?.type === "tool-error" && failure.error instanceof TetherToolError);
      assert.equal(failure.error.code, "remote_error");
      assertNoLeak(
        `${failure.error.message} ${JSON.stringify(failure.error)} ${failure.error.stack}`,
        "the tool error",
      );
    });
  });

  test("aborting generateText cancels the MCP call: the server receives notifications/cancelled", async () => {
    await withRecording(async (client) => {
      const tools = await aiTools(client);
      const controller = new AbortController();
      const started = logged(client, "call start", (d) => "started" in d);
      const cancelled = logged(client, "notifications/cancelled", (d) => "cancelled" in d);
      void started.then(() => controller.abort());
      const model = scripted("wait", {});
      const outcome = await generateText({
        model,
        tools,
        prompt: "wait",
        stopWhen: stepCountIs(3),
        abortSignal: controller.signal,
      }).then(
        () => "resolved",
        (e: unknown) => e,
      );
      const { started: id } = await started;
      const seen = await cancelled;
      assert.equal(seen.cancelled, id, "the cancellation names the call the server received");
      assert.ok(
        outcome instanceof Error && outcome.name === "AbortError",
        `generateText ended: ${String(outcome)}`,
      );
      assert.equal(model.doGenerateCalls.length, 1, "the model was not asked again after the abort");
    });
  });

  test("tools are picked, renamed and prefixed; calls reach the server's tool by its own name", async () => {
    await withRecording(async (client) => {
      const tools = await aiTools(client, {
        include: ["add", "fail"],
        exclude: ["fail"],
        rename: { add: "plus" },
        prefix: "calc_",
      });
      assert.deepEqual(Object.keys(tools), ["calc_plus"]);
      const model = scripted("calc_plus", { a: 2, b: 3 });
      await generateText({ model, tools, prompt: "2 + 3?", stopWhen: stepCountIs(3) });
      assert.deepEqual(toolOutputs(model.doGenerateCalls[1]), [
        { toolName: "calc_plus", output: { type: "content", value: [{ type: "text", text: "2 + 3 = 5" }] } },
      ]);
      const filtered = await aiTools(client, { filter: (t) => t.name.startsWith("re"), refresh: false });
      assert.deepEqual(Object.keys(filtered), ["refuse"]);
      await assert.rejects(
        aiTools(client, { rename: () => "same" }),
        (e: unknown) => TetherError.is(e) && e.code === "config" && e.reason === "tool_name_clash",
      );
      // A second server's tools join the same set under another prefix; the same prefix twice clashes.
      await aiTools(client, { include: ["add"], prefix: "more_", into: tools });
      assert.deepEqual(Object.keys(tools).sort(), ["calc_plus", "more_add"]);
      await assert.rejects(
        aiTools(client, { include: ["add"], prefix: "more_", into: tools }),
        (e: unknown) => TetherError.is(e) && e.code === "config" && e.reason === "tool_name_clash",
      );
    });
  });

  test("the set follows the server: after tools/list_changed the next step offers the new tool", async () => {
    await withRecording(async (client) => {
      const { promise: refresh, resolve: refreshed } = event<ToolSet>("refresh");
      // Another server's tools share the set; a refresh replaces only this one's.
      const tools = await aiTools(client, { include: ["add"], prefix: "other_", refresh: false });
      await aiTools(client, { into: tools, onRefresh: (set) => refreshed(set) });
      assert.equal("late" in tools, false);
      const model = scripted("grow", {});
      // The next step starts once the refresh is in: what it offers is read from the set then.
      const prepareStep = async ({ stepNumber }: { stepNumber: number }) => {
        if (stepNumber > 0) await refresh;
        return {};
      };
      await generateText({ model, tools, prompt: "grow", stopWhen: stepCountIs(3), prepareStep });
      assert.equal(await refresh, tools, "the set the caller holds is the one refreshed");
      assert.ok("late" in tools, "the new tool joined the set");
      assert.ok("other_add" in tools && "grow" in tools, "the other server's tools and this one's stayed");
      assert.ok(
        model.doGenerateCalls[1]?.tools?.some((t) => t.name === "late"),
        "the model's next step was offered the new tool",
      );
    });
  });

  test("a tool's output schema is declared, and its structured content is the output", async () => {
    await withEverything(async (client) => {
      const tools = await aiTools(client, { include: ["get-structured-content"] });
      const tool = tools["get-structured-content"];
      assert.ok(tool?.outputSchema, "the output schema is declared");
      const model = scripted("get-structured-content", { location: "Chicago" });
      const result = await generateText({ model, tools, prompt: "weather?", stopWhen: stepCountIs(3) });
      const output = result.steps[0]?.content.find((p) => p.type === "tool-result");
      assert.ok(output?.type === "tool-result");
      assert.deepEqual(Object.keys(output.output as object).sort(), [
        "conditions",
        "humidity",
        "temperature",
      ]);
      const [seen] = toolOutputs(model.doGenerateCalls[1]);
      assert.equal(seen?.output.type, "json");
    });
  });
});
