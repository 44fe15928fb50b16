// The client the official conformance suite drives: it appends the server URL to our command,
// names the scenario in MCP_CONFORMANCE_SCENARIO, the spec version in
// MCP_CONFORMANCE_PROTOCOL_VERSION and, for some scenarios, passes data as JSON in
// MCP_CONFORMANCE_CONTEXT (client credentials, the tool calls to make). Runs on the project's own
// Node (20+) and uses tether's public API only (see harness.mjs for where it is loaded from).
//
// Each module in scenarios/ exports `scenarios`: handlers keyed by scenario name, or by a prefix
// ending in `*` (`auth/*`). The most specific key wins: an exact name over a prefix, a longer
// prefix over a shorter one. Modules named `auth-*.mjs` hold the authorization extensions
// (enterprise-managed authorization, DPoP, workload identity); they are read after the others,
// so a handler there replaces the general one of auth.mjs for the same key.
import { readdirSync } from "node:fs";
import { createContext } from "./harness.mjs";

const dir = new URL("./scenarios/", import.meta.url);

async function loadHandlers() {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith(".mjs"))
    .sort((a, b) => Number(a.startsWith("auth-")) - Number(b.startsWith("auth-")) || a.localeCompare(b));
  const handlers = new Map();
  for (const file of files) {
    const module = await import(new URL(file, dir).href);
    for (const [key, handler] of Object.entries(module.scenarios ?? {})) handlers.set(key, handler);
  }
  return handlers;
}

function pick(handlers, scenario) {
  if (handlers.has(scenario)) return handlers.get(scenario);
  let best;
  for (const key of handlers.keys()) {
    if (!key.endsWith("*") || !scenario.startsWith(key.slice(0, -1))) continue;
    if (!best || key.length > best.length) best = key;
  }
  return best && handlers.get(best);
}

const ctx = await createContext();
const handler = pick(await loadHandlers(), ctx.scenario);
if (!handler) {
  ctx.log(`no handler for scenario ${ctx.scenario}: add one under qualify/conformance/scenarios/`);
  process.exit(2);
}
try {
  await handler(ctx);
} catch (error) {
  ctx.log(`failed: ${error?.stack ?? error}`);
  if (ctx.tether.TetherError.is(error)) ctx.log(JSON.stringify(error.toJSON()));
  process.exitCode = 1;
}
