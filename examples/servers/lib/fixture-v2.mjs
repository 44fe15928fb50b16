// The fixture as an McpServer factory for SDK 2.x (@modelcontextprotocol/server), shared by the
// modern HTTP and stdio servers. The factory builds a fresh instance per HTTP request or per
// stdio connection; `ctx.http.req` is the web Request on HTTP and absent on stdio.

import { fromJsonSchema, McpServer } from "@modelcontextprotocol/server";
import { callTool, GREET_PROMPT, GREETING, greetMessages, SERVER_INFO, TOOLS } from "./fixture.mjs";

const headersOf = (ctx) => (ctx.http?.req ? Object.fromEntries(ctx.http.req.headers) : {});

export function createFixtureServer() {
  const server = new McpServer(SERVER_INFO);
  for (const tool of TOOLS) {
    server.registerTool(
      tool.name,
      { description: tool.description, inputSchema: fromJsonSchema(tool.inputSchema) },
      (args, ctx) => callTool(tool.name, args, { signal: ctx.mcpReq.signal, headers: headersOf(ctx) }),
    );
  }
  server.registerResource(GREETING.name, GREETING.uri, { mimeType: GREETING.mimeType }, () => ({
    contents: [{ uri: GREETING.uri, mimeType: GREETING.mimeType, text: GREETING.text }],
  }));
  server.registerPrompt(
    GREET_PROMPT.name,
    {
      description: GREET_PROMPT.description,
      argsSchema: fromJsonSchema({
        type: "object",
        properties: { name: { type: "string" } },
        required: ["name"],
      }),
    },
    ({ name }) => ({ messages: greetMessages(name) }),
  );
  return server;
}
