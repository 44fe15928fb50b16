// The 2026-07-28 HTTP scenarios: per-request metadata and version retry, the standard
// Mcp-Method / Mcp-Name headers on every kind of request, and Mcp-Param-* headers mirrored from
// tool arguments (and tools whose header annotations are invalid left out of the listing).
import { HOST_HANDLERS } from "../harness.mjs";

export const scenarios = {
  // Every request carries the version header and the _meta envelope, with the client's
  // capabilities declared in it; the first request is refused with -32022 and must be retried.
  "request-metadata": (ctx) =>
    ctx.session({ handlers: HOST_HANDLERS }, async (client) => {
      await client.listTools();
    }),

  // One request of each kind the scenario checks headers on: tools, resources, prompts.
  "http-standard-headers": (ctx) =>
    ctx.session({ handlers: HOST_HANDLERS }, async (client) => {
      for (const tool of await client.listTools()) await client.callTool(tool.name, {});
      for (const resource of await client.listResources()) await client.readResource(resource.uri);
      for (const prompt of await client.listPrompts()) await client.getPrompt(prompt.name, {});
    }),

  // The suite names the calls to make; tether mirrors the annotated arguments into headers.
  "http-custom-headers": (ctx) =>
    ctx.session({}, async (client) => {
      await client.listTools();
      const calls = ctx.context.toolCalls ?? [];
      if (calls.length === 0) throw new Error("the suite supplied no tool calls");
      for (const call of calls) await client.callTool(call.name, call.arguments ?? {});
    }),

  // Only the valid tool survives the listing; each survivor is called.
  "http-invalid-tool-headers": (ctx) =>
    ctx.session({}, async (client) => {
      const tools = await client.listTools();
      ctx.log(`listed: ${tools.map((t) => t.name).join(", ")}`);
      for (const tool of tools) {
        await client.callTool(tool.name, { region: "us-west1" }).catch((error) => {
          ctx.log(`${tool.name} refused: ${error.message}`);
        });
      }
    }),
};
