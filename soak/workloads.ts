// The two workloads the soak repeats against one server: short-lived clients (connect, list,
// call, close, thousands of times) and one long-lived client kept busy with more concurrent calls
// than it has slots for. Both run in batches that end with nothing of theirs in flight, so a
// sample taken between batches sees only what is left over.

import { connect, type EraHintStore, type HttpTarget, type StdioTarget, TetherError } from "../src/index.ts";

/** One cycle in this many connects with `eraHints: false`, so detection runs in full. */
export const DETECT_EVERY = 10;
/** One cycle in this many closes the client while a call is in flight (C2: the call settles). */
export const ABANDON_EVERY = 25;
/** Each cycle's budget: generous, since a failure here is a finding, not noise. */
const CYCLE_TIMEOUT_MS = 20_000;

/** The long-lived client's slots, and the calls each round puts to it at once. */
export const LONG_MAX_IN_FLIGHT = 16;
export const LONG_CALLS_PER_ROUND = 32;
/** A call that must time out, and one the caller cancels, in every round. */
const TIMEOUT_AFTER_MS = 50;
const CANCEL_AFTER_MS = 25;
const BIG_BYTES = 64 * 1024;

export interface Target {
  name: string;
  transport: "stdio" | "streamable-http" | "sse";
  /** `url`, or `command` and `args`. */
  endpoint: Pick<HttpTarget, "url"> | Pick<StdioTarget, "command" | "args">;
}

export interface Tally {
  /** Cycles (or calls) that went as expected. */
  ok: number;
  /** Outcomes by kind, e.g. `detected`, `abandoned`, `timeout`, `cancelled`. */
  kinds: Record<string, number>;
  failures: number;
  /** The first few unexpected outcomes, payload-free. */
  failureSamples: string[];
}

const MAX_FAILURE_SAMPLES = 5;

export function newTally(): Tally {
  return { ok: 0, kinds: {}, failures: 0, failureSamples: [] };
}

function note(tally: Tally, kind: string): void {
  tally.ok++;
  tally.kinds[kind] = (tally.kinds[kind] ?? 0) + 1;
}

function fail(tally: Tally, where: string, error: unknown): void {
  tally.failures++;
  if (tally.failureSamples.length < MAX_FAILURE_SAMPLES)
    tally.failureSamples.push(`${where}: ${describe(error)}`);
}

export function describe(error: unknown): string {
  if (TetherError.is(error)) return `${error.code}/${error.reason} at ${error.stage} (${error.message})`;
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function textOf(result: { content: unknown[] }): unknown {
  const first = result.content[0] as { text?: unknown } | undefined;
  return first?.text;
}

/** Runs `count` jobs, at most `concurrency` at once; resolves when all have finished. */
async function pool(count: number, concurrency: number, job: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < count) await job(next++);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
}

export interface CycleOptions {
  cycles: number;
  concurrency: number;
  /** Cycles between two samples. */
  batch: number;
  hints: EraHintStore;
  /** The application's long-lived signal: given to every connect and call, never aborted. */
  signal: AbortSignal;
  /** Called between batches, with nothing in flight, with the cycles done so far. */
  between: (done: number) => void;
}

/** connect → listTools → callTool → close, `cycles` times. */
export async function runCycles(target: Target, o: CycleOptions): Promise<Tally> {
  const tally = newTally();
  for (let done = 0; done < o.cycles; ) {
    const size = Math.min(o.batch, o.cycles - done);
    const first = done;
    await pool(size, o.concurrency, (i) => cycle(target, first + i, o, tally));
    done += size;
    o.between(done);
  }
  return tally;
}

async function cycle(target: Target, i: number, o: CycleOptions, tally: Tally): Promise<void> {
  const detect = i % DETECT_EVERY === 0;
  const abandon = i % ABANDON_EVERY === ABANDON_EVERY - 1;
  let stage = "connect";
  try {
    const client = await connect({
      ...target.endpoint,
      eraHints: detect ? false : o.hints,
      timeoutMs: CYCLE_TIMEOUT_MS,
      signal: o.signal,
    });
    try {
      stage = "listTools";
      const tools = await client.listTools({ signal: o.signal });
      if (!tools.some((t) => t.name === "echo")) throw new Error("echo was not listed");
      stage = "callTool";
      if (abandon) {
        // The handler is attached at once: the call settles while close() is still running.
        const pending = client.callTool("slow", { ms: 10_000 }, { signal: o.signal }).then(
          () => undefined,
          (error: unknown) => error,
        );
        await delay(5);
        stage = "close";
        await client.close();
        const outcome = await pending;
        if (!TetherError.is(outcome) || outcome.code !== "connection")
          throw new Error(`a call pending at close settled with ${describe(outcome ?? "a result")}`);
        note(tally, "abandoned");
        return;
      }
      const message = `cycle ${i}`;
      const text = textOf(await client.callTool("echo", { message }, { signal: o.signal }));
      if (text !== message) throw new Error(`echo returned ${JSON.stringify(text)}`);
      note(tally, detect ? "detected" : "hinted");
    } finally {
      stage = "close";
      await client.close();
    }
  } catch (error) {
    fail(tally, `cycle ${i} ${stage}`, error);
  }
}

export interface LongLivedOptions {
  rounds: number;
  hints: EraHintStore;
  signal: AbortSignal;
  /** Called after each round, with nothing in flight. */
  between: (round: number) => void;
}

type Expect = "echo" | "slow" | "big" | "timeout" | "cancelled";

/** What call number `k` of a round is: mostly echoes, some slow calls that hold slots, a big reply, a timeout, a cancellation. */
function planned(k: number): Expect {
  if (k < 20) return "echo";
  if (k < 26) return "slow";
  if (k < 28) return "big";
  if (k < 30) return "timeout";
  return "cancelled";
}

/**
 * One client, `rounds` rounds of LONG_CALLS_PER_ROUND calls at once against LONG_MAX_IN_FLIGHT
 * slots: half of every round waits for a slot (back-pressure) within its own budget.
 */
export async function runLongLived(target: Target, o: LongLivedOptions): Promise<Tally> {
  const tally = newTally();
  let client: Awaited<ReturnType<typeof connect>>;
  try {
    client = await connect({
      ...target.endpoint,
      eraHints: o.hints,
      maxInFlight: LONG_MAX_IN_FLIGHT,
      signal: o.signal,
    });
  } catch (error) {
    fail(tally, "connect", error);
    return tally;
  }
  try {
    for (let round = 0; round < o.rounds; round++) {
      await Promise.all(
        Array.from({ length: LONG_CALLS_PER_ROUND }, (_, k) => longCall(client, round, k, o.signal, tally)),
      );
      if (client.state !== "open") {
        fail(tally, `round ${round}`, new Error(`the client is ${client.state}`));
        break;
      }
      o.between(round + 1);
    }
  } finally {
    await client.close();
  }
  return tally;
}

async function longCall(
  client: Awaited<ReturnType<typeof connect>>,
  round: number,
  k: number,
  signal: AbortSignal,
  tally: Tally,
): Promise<void> {
  const kind = planned(k);
  const where = `round ${round} call ${k} (${kind})`;
  try {
    if (kind === "echo") {
      const message = `${round}.${k}`;
      const text = textOf(await client.callTool("echo", { message }, { signal }));
      if (text !== message) throw new Error(`echo returned ${JSON.stringify(text)}`);
    } else if (kind === "slow") {
      const text = textOf(await client.callTool("slow", { ms: 10 }, { signal }));
      if (text !== "done") throw new Error(`slow returned ${JSON.stringify(text)}`);
    } else if (kind === "big") {
      const text = textOf(await client.callTool("big", { bytes: BIG_BYTES }, { signal }));
      if (typeof text !== "string" || text.length !== BIG_BYTES)
        throw new Error(`big returned ${typeof text === "string" ? text.length : typeof text} characters`);
    } else {
      const own = new AbortController();
      const timer = kind === "cancelled" ? setTimeout(() => own.abort(), CANCEL_AFTER_MS) : undefined;
      try {
        const outcome = await client
          .callTool(
            "slow",
            { ms: 5_000 },
            kind === "timeout" ? { signal, timeoutMs: TIMEOUT_AFTER_MS } : { signal: own.signal },
          )
          .then(
            () => undefined,
            (error: unknown) => error,
          );
        if (!TetherError.is(outcome) || outcome.code !== kind)
          throw new Error(`expected ${kind}, got ${describe(outcome ?? "a result")}`);
      } finally {
        clearTimeout(timer);
      }
    }
    note(tally, kind);
  } catch (error) {
    fail(tally, where, error);
  }
}
