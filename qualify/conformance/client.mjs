// The client the official conformance suite drives: it appends the server URL to our command
// and names the scenario in MCP_CONFORMANCE_SCENARIO. Runs on the project's own Node (20+)
// against the built package.
import { connect } from "../../dist/index.js";

const url = process.argv.at(-1);
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? "initialize";

const client = await connect({
  url,
  eraHints: false,
  timeoutMs: 20_000,
  handlers: {
    // Accept with whatever the schema defaults to: tether fills omitted fields from defaults.
    elicitation: () => ({ action: "accept", content: {} }),
  },
});
try {
  const tools = await client.listTools();
  if (scenario === "tools_call") {
    await client.callTool("add_numbers", { a: 5, b: 3 });
  } else if (scenario !== "initialize") {
    // Other scenarios expose one tool each that exercises the behaviour under test.
    for (const tool of tools) await client.callTool(tool.name, {});
  }
} finally {
  await client.close();
}
