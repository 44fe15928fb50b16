// The base protocol scenarios: the handshake, tool calls, elicitation defaults, SSE resumption,
// and the JSON Schema ones (a tool's schema is kept as the server sent it and never dereferenced).
import { HOST_HANDLERS } from "../harness.mjs";

/** Calls `name` when the server lists it; the scenarios that need a tool fail without it. */
async function callListed(ctx, client, name, args) {
  const tools = await client.listTools();
  if (!tools.some((t) => t.name === name)) throw new Error(`the server lists no tool ${name}`);
  const result = await client.callTool(name, args);
  ctx.log(`${name}: ${JSON.stringify(result.content ?? []).slice(0, 200)}`);
  return tools;
}

export const scenarios = {
  initialize: (ctx) => ctx.session({}, (client) => client.listTools()),

  tools_call: (ctx) => ctx.session({}, (client) => callListed(ctx, client, "add_numbers", { a: 5, b: 3 })),

  "elicitation-sep1034-client-defaults": (ctx) =>
    ctx.session({ handlers: { elicitation: HOST_HANDLERS.elicitation } }, (client) =>
      callListed(ctx, client, "test_client_elicitation_defaults", {}),
    ),

  // The server ends the call's SSE stream early and answers on the resumed GET stream.
  "sse-retry": (ctx) => ctx.session({}, (client) => callListed(ctx, client, "test_reconnection", {})),

  // Listing must not fetch the network `$ref` in the tool's schema.
  "json-schema-ref-no-deref": (ctx) => ctx.session({}, (client) => client.listTools()),

  // The focal tool's input schema goes back to the server exactly as listTools() gave it.
  "json-schema-2020-12-preservation": (ctx) =>
    ctx.session({}, async (client) => {
      const tools = await client.listTools();
      const focal = tools.find((t) => t.name === "json_schema_2020_12_tool");
      if (!focal) throw new Error("the server lists no json_schema_2020_12_tool");
      await client.callTool("json_schema_echo", { schema: focal.inputSchema });
    }),
};
