// Result shapes through the public client: a scripted stdio server answers `server/discover`,
// `initialize`, `tools/list` and `tools/call` with generated garbage (wrong types for
// protocolVersion and capabilities, supportedVersions of junk, tools that are no array, tool
// entries without names, nextCursor of junk, content that is no array, unknown resultType,
// JSON-RPC errors of any code, 100k-deep schemas, stray fields beside a result). Every run of
// connect + listTools + callTool ends in a result or a TetherError with a code that fits what the
// server did — never an uncaught exception, never code `internal`, never a hang (E4).
//
// Every run is on a fake clock (`deps.clock`): a reply decides each step with no time passing,
// so a busy machine cannot turn a slow run into a timeout. The one case where waiting out a
// limit is right, a reply with fields beside its result that the client may skip, is where the
// test moves time: once the server wrote such a reply, by a whole budget. A run that still has
// not settled after HANG_MS of real time was waiting for a limit nothing would end: a hang.
//
// Each run spawns a process (about 100 ms on a small machine), so this property runs few times;
// one script serves every run and reads its answers from a plan file rewritten per run. In
// `npm test` a failing run is reported as found (endOnFailure): shrinking a run that hangs costs
// seconds per step. The long run shrinks.

import assert from "node:assert/strict";
import { after, type TestContext, test } from "node:test";
import fc from "fast-check";
import { type Client, connect, type ErrorCode, KNOWN_VERSIONS, TetherError } from "../../src/index.ts";
import { type FakeClock, fakeClock } from "../helpers/fake-clock.ts";
import { fuzz } from "./fuzz-config.ts";
import { DEEP_MARK, garbageServer, type Plan, type ReplyBody } from "./garbage-server.ts";

const server = garbageServer();
after(() => {
  server.killAll();
  server.dispose();
});

const LIMITS = { maxTools: 6, maxListPages: 4, maxToolSchemaBytes: 4_096, maxInputRounds: 2 } as const;
/**
 * Real time a run may take before it counts as a hang. Nothing in a run waits on time (the clock
 * is fake), so this only has to hold a process start and a few replies on a loaded machine.
 */
const HANG_MS = 20_000;

// ---------------------------------------------------------------- garbage

const junk: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  fc.constantFrom(null, "", 0, -1, true, [], {}, "1e999", 1e308),
);
const LEGACY = KNOWN_VERSIONS.filter((v) => v < "2026");
const version: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom(...KNOWN_VERSIONS) },
  { weight: 1, arbitrary: fc.constantFrom("2099-01-01", "2025-13-45", "2024-11-05 ", "latest", "") },
  { weight: 1, arbitrary: junk },
);
/** What a legacy server answers to initialize: mostly a version it could speak. */
const offered: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...LEGACY) },
  version,
);
const maybe = <T>(arb: fc.Arbitrary<T>) =>
  fc.oneof({ weight: 3, arbitrary: arb }, { weight: 1, arbitrary: junk });

const initializeResult = fc.record(
  {
    protocolVersion: offered,
    capabilities: maybe(fc.constant({ tools: {} })),
    serverInfo: maybe(fc.record({ name: maybe(fc.string()), version: maybe(fc.string()) })),
    instructions: maybe(fc.string({ maxLength: 12 })),
  },
  { requiredKeys: [] },
);

const discoverResult = fc.record(
  {
    supportedVersions: maybe(fc.array(version, { minLength: 1, maxLength: 4 })),
    capabilities: maybe(fc.constant({ tools: {} })),
    resultType: maybe(fc.constantFrom("complete", "input_required", "bogus")),
    _meta: maybe(fc.constant({ "io.modelcontextprotocol/serverInfo": { name: "g", version: "1" } })),
  },
  { requiredKeys: [] },
);

const schema: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: fc.constant({ type: "object" }) },
  { weight: 2, arbitrary: junk },
  { weight: 1, arbitrary: fc.constant({ type: "object", description: "x".repeat(5_000) }) },
  { weight: 1, arbitrary: fc.constant({ type: "object", properties: { a: DEEP_MARK } }) },
);
const toolEntry: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ name: fc.string({ maxLength: 6 }), inputSchema: schema }) },
  {
    weight: 2,
    arbitrary: fc.record(
      { name: maybe(fc.string({ maxLength: 6 })), inputSchema: schema, description: junk },
      { requiredKeys: [] },
    ),
  },
  { weight: 1, arbitrary: junk },
);
const toolsListResult = fc.record(
  {
    tools: fc.oneof(
      { weight: 5, arbitrary: fc.array(toolEntry, { maxLength: 5 }) },
      { weight: 1, arbitrary: junk },
    ),
    nextCursor: fc.oneof(
      { weight: 3, arbitrary: fc.constant("") },
      { weight: 2, arbitrary: fc.constantFrom("c1", "c2") },
      { weight: 1, arbitrary: fc.string({ maxLength: 3 }) },
      { weight: 1, arbitrary: junk },
    ),
    resultType: maybe(fc.constantFrom("complete", "bogus")),
  },
  { requiredKeys: [] },
);

const toolsCallResult = fc.record(
  {
    content: maybe(fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 3 })),
    isError: junk,
    structuredContent: junk,
    resultType: maybe(fc.constantFrom("complete", "input_required", "bogus")),
    inputRequests: maybe(
      fc.dictionary(
        fc.string({ maxLength: 3 }),
        fc.record({
          method: fc.constantFrom("elicitation/create", "roots/list", "sampling/createMessage", "x"),
        }),
        { maxKeys: 2 },
      ),
    ),
    requestState: junk,
  },
  { requiredKeys: [] },
);

const errorBody: fc.Arbitrary<ReplyBody> = fc.record({
  error: fc.record({
    code: fc.oneof(fc.constantFrom(-32601, -32602, -32603, -32000, -32022, -32020, -32021), fc.integer()),
    message: fc.string({ maxLength: 12 }),
    data: fc.oneof(junk, fc.record({ supported: fc.array(version, { maxLength: 3 }) })),
  }),
});

/** Fields a reply should not carry beside its result. */
const stray: fc.Arbitrary<ReplyBody> = fc.constantFrom<ReplyBody>(
  { error: null },
  { error: {} },
  { error: "x" },
  { method: "x" },
  { method: [] },
);

function replies(
  result: fc.Arbitrary<unknown>,
  maxLength: number,
  strayFields: boolean,
): fc.Arbitrary<ReplyBody[]> {
  const body: fc.Arbitrary<ReplyBody> = strayFields
    ? fc.oneof(
        { weight: 2, arbitrary: result.map((r) => ({ result: r })) },
        { weight: 1, arbitrary: fc.tuple(result, stray).map(([r, s]) => ({ result: r, ...s })) },
      )
    : fc.oneof(
        { weight: 6, arbitrary: result.map((r) => ({ result: r })) },
        { weight: 1, arbitrary: errorBody },
      );
  return fc.array(body, { minLength: 1, maxLength });
}

function planOf(strayFields: boolean): fc.Arbitrary<Plan> {
  return fc.record({
    "server/discover": replies(discoverResult, 2, strayFields),
    initialize: replies(initializeResult, 1, strayFields),
    "tools/list": replies(toolsListResult, 5, strayFields),
    "tools/call": replies(toolsCallResult, 3, strayFields),
  });
}

/** The codes a run may end in, given what the server was told to do. */
function allowedCodes(p: Plan): Set<ErrorCode> {
  const bodies = Object.values(p).flat();
  const text = JSON.stringify(p);
  const allowed = new Set<ErrorCode>(["protocol"]);
  // A reply with fields beside its result is no JSON-RPC response; a stdio client may skip it as
  // it skips any line that is not JSON-RPC, and then time out waiting (but never wait longer).
  if (bodies.some((b) => "result" in b && ("error" in b || "method" in b))) allowed.add("timeout");
  if (bodies.some((b) => "error" in b && !("result" in b))) allowed.add("remote_error");
  const pages = p["tools/list"] ?? [];
  const entries = pages.reduce((n, b) => {
    const tools = (b.result as { tools?: unknown } | undefined)?.tools;
    return n + (Array.isArray(tools) ? tools.length : 0);
  }, 0);
  if (
    text.includes(DEEP_MARK) ||
    text.includes("x".repeat(5_000)) ||
    pages.length >= LIMITS.maxListPages ||
    entries > LIMITS.maxTools ||
    text.includes('"input_required"')
  )
    allowed.add("limit");
  return allowed;
}

type Outcome =
  | { ok: true; version: string; tools: unknown[]; content: unknown }
  | { ok: false; error: unknown; step: string };

async function exercise(timeoutMs: number, clock: FakeClock): Promise<Outcome> {
  let client: Client | undefined;
  let step = "connect";
  try {
    client = await connect({
      command: server.command,
      args: server.args,
      eraHints: false,
      timeoutMs,
      probeTimeoutMs: Math.min(2_000, timeoutMs),
      ...LIMITS,
      deps: { clock },
    });
    step = "listTools";
    const tools = await client.listTools();
    step = "callTool";
    const result = await client.callTool("anything", { a: 1 });
    return { ok: true, version: client.protocolVersion, tools, content: result.content };
  } catch (error) {
    return { ok: false, error, step };
  } finally {
    await client?.close();
  }
}

/**
 * One run on a fake clock. Each time the server writes a reply the client may skip, time moves
 * by a whole budget, so the step waiting for it ends with its limit as it would in real time.
 */
async function bounded(p: Plan, timeoutMs: number): Promise<Outcome> {
  server.setPlan(p);
  const clock = fakeClock();
  let settled = false;
  const run = exercise(timeoutMs, clock).finally(() => {
    settled = true;
  });
  let waitedOut = server.strays();
  const started = performance.now();
  while (!settled) {
    if (server.strays() > waitedOut) {
      waitedOut++;
      await clock.advance(timeoutMs);
      continue;
    }
    if (performance.now() - started > HANG_MS) {
      // The client never settled, so nothing of ours will stop its server: stop it here.
      const waiting = clock.pending().map((t) => `${t.ms} ms`);
      const killed = server.killAll();
      throw new Error(
        `hang: no outcome within ${HANG_MS} ms, waiting on limits [${waiting.join(", ")}] ` +
          `(${killed} server process(es) still running)`,
      );
    }
    // Polls the server's log (a file) for the next reply to wait out.
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return await run;
}

/** How the runs ended, reported as a diagnostic: a property whose runs all end alike tests little. */
const outcomes = new Map<string, number>();
function tally(o: Outcome): void {
  const label = o.ok
    ? "result"
    : TetherError.is(o.error)
      ? `${o.step}: ${o.error.code}/${o.error.reason}`
      : `${o.step}: ${String(o.error)}`;
  outcomes.set(label, (outcomes.get(label) ?? 0) + 1);
}
function report(t: TestContext): void {
  const sorted = [...outcomes].sort((a, b) => b[1] - a[1]);
  t.diagnostic(`outcomes: ${sorted.map(([k, n]) => `${n}× ${k}`).join("; ")}`);
  outcomes.clear();
}

function property(plans: fc.Arbitrary<Plan>, timeoutMs: number) {
  return fc.asyncProperty(plans, async (p: Plan) => {
    const outcome = await bounded(p, timeoutMs);
    tally(outcome);
    if (outcome.ok) {
      assert.ok((KNOWN_VERSIONS as readonly string[]).includes(outcome.version));
      for (const t of outcome.tools as { name?: unknown; inputSchema?: unknown }[]) {
        assert.equal(typeof t.name, "string", "every listed tool has a name");
        assert.ok(typeof t.inputSchema === "object" && t.inputSchema !== null, "and a schema object");
      }
      assert.ok(Array.isArray(outcome.content), "a call result has a content array");
      return;
    }
    const e = outcome.error;
    assert.ok(TetherError.is(e), `${outcome.step} threw ${String(e)}`);
    const allowed = allowedCodes(p);
    assert.ok(
      allowed.has(e.code),
      `${outcome.step} failed with ${e.code}/${e.reason} at ${e.stage}; expected one of ${[...allowed].join(", ")}`,
    );
  });
}

/** In `npm test`, a failure is reported as found: shrinking runs that time out would take minutes. */
const endOnFailure = process.env.FUZZ_RUNS === undefined;

test("X4, E4: garbage results and JSON-RPC errors through connect + listTools + callTool end in a result or a fitting TetherError, never internal, never a hang", async (t) => {
  try {
    await fc.assert(property(planOf(false), 4_000), { ...fuzz<[Plan]>(20, 200), endOnFailure });
  } finally {
    report(t);
  }
});

test("X4, E4: results with stray fields beside them (error, method) end in a result or a fitting TetherError, never a hang", async (t) => {
  try {
    await fc.assert(property(planOf(true), 1_000), { ...fuzz<[Plan]>(10, 400), endOnFailure });
  } finally {
    report(t);
  }
});
