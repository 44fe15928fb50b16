// A bare stdio MCP server (2025-11-25, newline-delimited JSON, no SDK) with one tool, `record`,
// whose outputSchema has 20 typed properties and whose every call returns a matching
// structuredContent. For measuring what checking a result against its schema costs a client,
// with as little server work as possible around it.
//
//   node bench/scripts/structured-server.mjs

import { createInterface } from "node:readline";

const properties = {};
const record = {};
for (let i = 0; i < 20; i++) {
  const kind = ["string", "integer", "number", "boolean"][i % 4];
  properties[`field${i}`] = { type: kind, description: `field ${i}` };
  record[`field${i}`] =
    kind === "string" ? `value ${i}` : kind === "integer" ? i : kind === "number" ? i + 0.5 : i % 2 === 0;
}
const tool = {
  name: "record",
  description: "Returns one record of 20 fields.",
  inputSchema: { type: "object", properties: { id: { type: "integer" } } },
  outputSchema: {
    type: "object",
    properties,
    required: Object.keys(properties),
    additionalProperties: false,
  },
};
const result = { content: [{ type: "text", text: JSON.stringify(record) }], structuredContent: record };

const send = (message) => process.stdout.write(`${JSON.stringify(message)}\n`);
createInterface({ input: process.stdin }).on("line", (line) => {
  if (line.trim() === "") return;
  const m = JSON.parse(line);
  if (m.id === undefined) return;
  if (m.method === "initialize")
    send({
      jsonrpc: "2.0",
      id: m.id,
      result: {
        protocolVersion: "2025-11-25",
        capabilities: { tools: {} },
        serverInfo: { name: "structured", version: "0" },
      },
    });
  else if (m.method === "tools/list") send({ jsonrpc: "2.0", id: m.id, result: { tools: [tool] } });
  else if (m.method === "tools/call") send({ jsonrpc: "2.0", id: m.id, result });
  else send({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "Method not found" } });
});
process.stdin.on("end", () => process.exit(0));
