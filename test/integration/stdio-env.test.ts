// A stdio server inherits PATH, HOME and the like, not the credentials in our environment;
// explicit env and inheritEnv: "all" are the ways to give it more (X2).
import assert from "node:assert/strict";
import { after, test } from "node:test";
import { connect } from "../../src/index.ts";
import { startStdioScript } from "../helpers/hostile.ts";

const ENV_SERVER = `
onMessage((m) => {
  if (m.method === "initialize") return send({ jsonrpc: "2.0", id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: "env", version: "1" } } });
  if (m.method === "tools/call") return send({ jsonrpc: "2.0", id: m.id, result: { content: [{ type: "text", text: JSON.stringify(Object.keys(process.env)) }] } });
  if (m.id !== undefined) send({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "no" } });
});
`;
const script = startStdioScript(ENV_SERVER);
after(() => script.dispose());

async function envKeys(options: {
  env?: Record<string, string>;
  inheritEnv?: "safe" | "all";
}): Promise<string[]> {
  const client = await connect({ command: script.command, args: script.args, eraHints: false, ...options });
  try {
    const result = await client.callTool("env");
    return JSON.parse((result.content[0] as { text: string }).text) as string[];
  } finally {
    await client.close();
  }
}

test("X2: a stdio server inherits PATH but not the credentials in our environment", async () => {
  process.env.TETHER_TEST_PARENT_SECRET = "parent-secret-value";
  try {
    const keys = await envKeys({});
    assert.ok(keys.includes("PATH"));
    assert.ok(!keys.includes("TETHER_TEST_PARENT_SECRET"));
    const given = await envKeys({ env: { API_KEY: "explicit" } });
    assert.ok(given.includes("API_KEY"));
    const all = await envKeys({ inheritEnv: "all" });
    assert.ok(all.includes("TETHER_TEST_PARENT_SECRET"));
  } finally {
    delete process.env.TETHER_TEST_PARENT_SECRET;
  }
});
