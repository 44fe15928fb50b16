// Server-initiated input: a legacy server's elicitation/sampling/roots requests, and a modern
// server's input_required rounds, answered by the application's handlers and declared as
// capabilities; without handlers they are refused or declined, never hung on.
import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import {
  type Client,
  type ClientHandlers,
  type ConnectOptions,
  connect,
  TetherError,
} from "../../src/index.ts";
import { type StdioScript, startStdioScript } from "../helpers/hostile.ts";

const LEGACY = `
let pending;
onMessage((m) => {
  if (m.method === "server/discover") return send({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "nope" } });
  if (m.method === "initialize") {
    globalThis.caps = m.params.capabilities;
    return send({ jsonrpc: "2.0", id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: "h", version: "1" } } });
  }
  if (m.method === "tools/call") {
    pending = m.id;
    return send({ jsonrpc: "2.0", id: "ask-1", method: m.params.name, params: { message: "Your name?", requestedSchema: { type: "object", properties: { name: { type: "string", default: "Ada" } } } } });
  }
  if (m.id === "ask-1") {
    const answer = m.result ?? { error: m.error };
    return send({ jsonrpc: "2.0", id: pending, result: { content: [{ type: "text", text: JSON.stringify({ answer, caps: globalThis.caps }) }] } });
  }
});
`;

const MODERN = `
onMessage((m) => {
  if (m.method === "server/discover") {
    return send({ jsonrpc: "2.0", id: m.id, result: { supportedVersions: ["2026-07-28"], capabilities: { tools: {} } } });
  }
  if (m.method === "tools/call") {
    const caps = m.params._meta["io.modelcontextprotocol/clientCapabilities"];
    if (!m.params.inputResponses) {
      return send({ jsonrpc: "2.0", id: m.id, result: { resultType: "input_required", requestState: "opaque-state-1",
        inputRequests: { who: { method: "elicitation/create", params: { message: "Name?", requestedSchema: { type: "object", properties: {} } } },
                         where: { method: "roots/list", params: {} } } } });
    }
    return send({ jsonrpc: "2.0", id: m.id, result: { content: [{ type: "text", text: JSON.stringify({ state: m.params.requestState, responses: m.params.inputResponses, caps }) }] } });
  }
});
`;

/** The first content block's text of a tool result. */
const textOf = (result: { content: unknown[] }) => (result.content[0] as { text: string }).text;

describe("server-initiated input", () => {
  const legacy = startStdioScript(LEGACY);
  const modern = startStdioScript(MODERN);
  after(() => {
    legacy.dispose();
    modern.dispose();
  });

  /** Runs `use` with a client of `script` (no remembered era, these settings), closed afterwards either way. */
  async function withClient(
    script: StdioScript,
    settings: Partial<ConnectOptions>,
    use: (client: Client) => Promise<void>,
  ): Promise<void> {
    const client = await connect({
      command: script.command,
      args: script.args,
      eraHints: false,
      ...settings,
    } as ConnectOptions);
    try {
      await use(client);
    } finally {
      await client.close();
    }
  }

  test("a legacy elicitation request is answered by the handler, declared in initialize", async () => {
    const handlers: ClientHandlers = {
      elicitation: async (params) => ({
        action: "accept",
        content: { name: String(params.message).length },
      }),
    };
    await withClient(legacy, { handlers }, async (client) => {
      const result = await client.callTool("elicitation/create");
      const seen = JSON.parse(textOf(result)) as { answer: unknown; caps: unknown };
      assert.deepEqual(seen.answer, { action: "accept", content: { name: 10 } });
      assert.deepEqual(seen.caps, { elicitation: {} });
    });
  });

  test("without a handler the server's request is refused with -32601 and the call still completes", async () => {
    await withClient(legacy, { call: { timeoutMs: 5000 } }, async (client) => {
      const result = await client.callTool("sampling/createMessage");
      const seen = JSON.parse(textOf(result)) as { answer: { error: { code: number } }; caps: unknown };
      assert.equal(seen.answer.error.code, -32601);
      assert.deepEqual(seen.caps, {});
    });
  });

  test("a handler that throws is answered with a generic error, nothing of its message", async () => {
    const handlers: ClientHandlers = {
      roots: () => {
        throw new Error("secret-handler-detail");
      },
    };
    await withClient(legacy, { handlers }, async (client) => {
      const text = textOf(await client.callTool("roots/list"));
      assert.match(text, /-32603/);
      assert.ok(!text.includes("secret-handler-detail"));
    });
  });

  test("a modern input_required round is answered by handlers, requestState echoed exactly, capabilities in _meta", async () => {
    const handlers: ClientHandlers = {
      elicitation: () => ({ action: "accept", content: { name: "Ada" } }),
      roots: () => ({ roots: [{ uri: "file:///work", name: "work" }] }),
    };
    await withClient(modern, { handlers }, async (client) => {
      assert.equal(client.era, "modern");
      const result = await client.callTool("anything");
      const seen = JSON.parse(textOf(result)) as Record<string, unknown>;
      assert.equal(seen.state, "opaque-state-1");
      assert.deepEqual(seen.responses, {
        who: { action: "accept", content: { name: "Ada" } },
        where: { roots: [{ uri: "file:///work", name: "work" }] },
      });
      assert.deepEqual(seen.caps, { elicitation: {}, roots: { listChanged: false } });
    });
  });

  test("without handlers a modern elicitation is declined and roots are empty", async () => {
    await withClient(modern, {}, async (client) => {
      try {
        const result = await client.callTool("anything");
        const seen = JSON.parse(textOf(result)) as Record<string, unknown>;
        assert.deepEqual(seen.responses, { who: { action: "decline" }, where: { roots: [] } });
      } catch (error) {
        assert.fail(TetherError.is(error) ? JSON.stringify(error.toJSON()) : String(error));
      }
    });
  });
});
