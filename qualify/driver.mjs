// Drives the installed package's library API for the qualification suite, under whichever
// runtime runs it (Node or Bun). One scenario in argv[2] as JSON; one JSON outcome on stdout.
import { connect, TetherError } from "mcp-tether";

const plan = JSON.parse(process.argv[2]);
const started = performance.now();
const out = (o) =>
  process.stdout.write(`${JSON.stringify({ ...o, elapsedMs: Math.round(performance.now() - started) })}\n`);
const controller = new AbortController();
if (plan.abortAfterMs !== undefined)
  setTimeout(() => controller.abort(new Error("caller gave up")), plan.abortAfterMs);

let client;
try {
  client = await connect({ eraHints: false, ...plan.options });
  const result = plan.call
    ? await client.callTool(plan.call.name, plan.call.args ?? {}, { signal: controller.signal })
    : { tools: (await client.listTools()).map((t) => t.name) };
  out({ ok: true, era: client.era, version: client.protocolVersion, result });
} catch (error) {
  out({
    ok: false,
    error: TetherError.is(error) ? error.toJSON() : { code: "not-a-tether-error", message: String(error) },
  });
} finally {
  await client?.close();
}
