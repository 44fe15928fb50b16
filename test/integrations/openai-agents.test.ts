// `mcp-tether/openai-agents` in the Agents SDK's own run loop: an Agent whose `mcpServers` is a
// TetherMcpServer, run by the SDK's Runner with a scripted model (the SDK's `Model` interface: a
// function call, then a final answer) against server-everything and a recording server. The
// model's second request is where a tool's result (or failure) shows up, so that is what each test
// reads. Events are waited for, never slept for.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  Agent,
  getAllMcpTools,
  type Model,
  type ModelRequest,
  type ModelResponse,
  Runner,
  Usage,
} from "@openai/agents";
import { type Client, TetherError } from "../../src/index.ts";
import { TetherMcpServer, TetherToolError } from "../../src/integrations/openai-agents.ts";
import { assertNoLeak } from "../helpers/canaries.ts";
import { EVERYTHING, event, logged, RECORDING, withClient } from "../helpers/integrations.ts";

/** The SDK's Model interface, scripted: it asks for one tool, then answers once it has a result. */
class ScriptedModel implements Model {
  readonly requests: ModelRequest[] = [];
  constructor(
    readonly toolName: string,
    readonly input: object,
  ) {}

  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    this.requests.push(request);
    const answered =
      typeof request.input !== "string" && request.input.some((i) => i.type === "function_call_result");
    return {
      usage: new Usage(),
      output: answered
        ? [
            {
              type: "message",
              role: "assistant",
              status: "completed",
              content: [{ type: "output_text", text: "done" }],
            },
          ]
        : [
            {
              type: "function_call",
              callId: "call-1",
              name: this.toolName,
              arguments: JSON.stringify(this.input),
              status: "completed",
            },
          ],
    };
  }

  // biome-ignore lint/correctness/useYield: the runner here never streams
  async *getStreamedResponse(): AsyncIterable<never> {
    throw new Error("the scripted model does not stream");
  }
}

/** What the model was shown of each tool call in one request: the outputs, as text. */
function toolOutputs(request: ModelRequest | undefined): string[] {
  assert.ok(request, "the model was asked again after the tool ran");
  assert.ok(typeof request.input !== "string");
  return request.input.flatMap((i) => (i.type === "function_call_result" ? [JSON.stringify(i.output)] : []));
}

const runner = new Runner({ tracingDisabled: true });

async function runWith(server: TetherMcpServer, model: ScriptedModel, signal?: AbortSignal) {
  const agent = new Agent({ name: "tester", instructions: "use the tools", model, mcpServers: [server] });
  return runner.run(agent, "go", signal ? { signal } : {});
}

describe("mcp-tether/openai-agents", { concurrency: true }, () => {
  test("the model asks for get-sum and the sum flows back into its next turn", async () => {
    await withClient(EVERYTHING, async (client) => {
      const server = new TetherMcpServer(client);
      assert.equal(server.name, client.serverInfo?.name, "named after the server");
      // The SDK offers MCP tools under function names: get-sum is get_sum to the model.
      const model = new ScriptedModel("get_sum", { a: 2, b: 3 });
      const result = await runWith(server, model);
      assert.equal(result.finalOutput, "done");
      const offered = model.requests[0]?.tools.find((t) => t.name === "get_sum");
      assert.ok(offered?.type === "function", "get-sum was offered to the model");
      assert.equal(offered.description, "Returns the sum of two numbers");
      assert.deepEqual(Object.keys(offered.parameters.properties).sort(), ["a", "b"]);
      assert.deepEqual(toolOutputs(model.requests[1]).length, 1);
      assert.match(toolOutputs(model.requests[1])[0] ?? "", /The sum of 2 and 3 is 5\./);
    });
  });

  test("a tool that outlives its call budget comes back to the model as an error, in bounded time", async () => {
    await withClient(EVERYTHING, async (client) => {
      const server = new TetherMcpServer(client, { call: { timeoutMs: 300 } });
      const model = new ScriptedModel("trigger_long_running_operation", { duration: 30, steps: 3 });
      const started = performance.now();
      await runWith(server, model);
      // The operation takes 30 s; the budget ends it at 300 ms (10 s allows for a loaded machine).
      assert.ok(
        performance.now() - started < 10_000,
        "the run went on well before the tool would have ended",
      );
      const [seen] = toolOutputs(model.requests[1]);
      assert.match(seen ?? "", /timeout/);
      assert.match(seen ?? "", /300 ms/);
    });
  });

  test("a tool's own failure (isError) is the result the model sees", async () => {
    await withClient(RECORDING, async (client) => {
      const model = new ScriptedModel("refuse", {});
      await runWith(new TetherMcpServer(client), model);
      assert.match(toolOutputs(model.requests[1])[0] ?? "", /the file is locked/);
    });
  });

  test("a failed call shows the model the public code and tether's words, never the server's text", async () => {
    await withClient(RECORDING, async (client) => {
      const direct = await client.callTool("fail").catch((e: unknown) => e);
      assert.ok(
        TetherError.is(direct) && direct.rpcMessage?.includes("CANARY"),
        "the server's text carried the canary",
      );
      const server = new TetherMcpServer(client);
      const model = new ScriptedModel("fail", {});
      await runWith(server, model);
      const [seen] = toolOutputs(model.requests[1]);
      assert.match(seen ?? "", /remote_error/);
      assertNoLeak(JSON.stringify(model.requests.map((r) => r.input)), "what the model was shown");
      // Called directly, the failure is a TetherToolError with no cause.
      const thrown = await server.callTool("fail", {}).catch((e: unknown) => e);
      assert.ok(thrown instanceof TetherToolError);
      assert.equal(thrown.code, "remote_error");
      assert.equal(thrown.cause, undefined);
      assertNoLeak(`${thrown.message} ${JSON.stringify(thrown)} ${thrown.stack}`, "the tool error");
    });
  });

  test("aborting the run cancels the MCP call: the server receives notifications/cancelled", async () => {
    await withClient(RECORDING, async (client) => {
      const controller = new AbortController();
      const started = logged(client, "call start", (d) => "started" in d);
      const cancelled = logged(client, "notifications/cancelled", (d) => "cancelled" in d);
      void started.then(() => controller.abort());
      const model = new ScriptedModel("wait", {});
      const outcome = await runWith(new TetherMcpServer(client), model, controller.signal).then(
        () => "resolved",
        (e: unknown) => e,
      );
      const { started: id } = await started;
      const seen = await cancelled;
      assert.equal(seen.cancelled, id, "the cancellation names the call the server received");
      assert.notEqual(outcome, "resolved", "the aborted run did not complete");
      assert.equal(model.requests.length, 1, "the model was not asked again after the abort");
    });
  });

  test("tools are picked, renamed and prefixed; calls reach the server's tool by its own name", async () => {
    await withClient(RECORDING, async (client) => {
      const server = new TetherMcpServer(client, {
        include: ["add", "refuse"],
        rename: { add: "plus" },
        prefix: "calc_",
      });
      const model = new ScriptedModel("calc_plus", { a: 2, b: 3 });
      await runWith(server, model);
      assert.deepEqual(model.requests[0]?.tools.map((t) => t.name).sort(), ["calc_plus", "calc_refuse"]);
      assert.match(toolOutputs(model.requests[1])[0] ?? "", /2 \+ 3 = 5/);
      // A server that has not listed yet (the SDK had the list cached under its name) still finds the tool.
      const fresh = new TetherMcpServer(client, { rename: { add: "plus" }, prefix: "calc_" });
      const [block] = await fresh.callTool("calc_plus", { a: 4, b: 5 });
      assert.deepEqual(block, { type: "text", text: "4 + 5 = 9" });
    });
  });

  test("given connect options it connects and closes its own client; a cached tool list follows list_changed", async () => {
    const server = new TetherMcpServer(RECORDING, { name: "recording-own", cacheToolsList: true });
    assert.ok(!server.client, "no client before connect()");
    await server.connect();
    const client = server.client as Client | undefined;
    assert.equal(client?.state, "open");
    try {
      const names = async () => (await getAllMcpTools([server])).map((t) => t.name).sort();
      assert.deepEqual(await names(), ["add", "fail", "grow", "refuse", "wait"]);
      // The SDK answers from its cache now; the server's announcement must drop it.
      const { promise: announced, resolve: changed } = event<void>("tools/list_changed");
      client?.onListChanged("tools", () => changed());
      await server.callTool("grow", {});
      await announced;
      assert.ok((await names()).includes("late"), "the next listing has the new tool");
    } finally {
      await server.close();
    }
    assert.equal(client?.state, "closed", "close() closed the client it made");
  });

  test("given a client, close() leaves it open for its owner", async () => {
    await withClient(RECORDING, async (client) => {
      const server = new TetherMcpServer(client, { name: "borrowed" });
      await server.connect();
      await server.close();
      assert.equal(client.state, "open");
    });
  });
});
