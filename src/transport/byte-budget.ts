import { ByteCeilingExceeded } from "../errors/byte-ceiling.ts";
import { raceAbort } from "../lifecycle/abort.ts";

/**
 * Marks a body that ends by itself when a given signal aborts (the built-in HTTP client's: node
 * destroys the request, and the body with it, so a pending read fails at once). boundedChunks,
 * reading such a body under that same signal, need not race each read against it.
 */
export const endsWithSignal = Symbol("tether.endsWithSignal");

/**
 * Raw byte accounting for everything that arrives. A chunk is checked against the ceiling before
 * it is accepted; once the ceiling is passed the budget is spent for good.
 */
export class ByteBudget {
  #seen = 0;
  /**
   * `maxBytes` must be a whole number of bytes, zero or more. Anything else (NaN, Infinity, a
   * negative or a fraction) is refused here: NaN would make every comparison false and so switch
   * the ceiling off, and Infinity would do the same in plain sight.
   */
  constructor(readonly maxBytes: number) {
    if (!Number.isSafeInteger(maxBytes) || maxBytes < 0)
      throw new RangeError("a byte ceiling must be a whole number of bytes, zero or more");
  }

  get seenBytes(): number {
    return this.#seen;
  }

  /** Accepts `n` more bytes, or throws ByteCeilingExceeded if that would pass the ceiling. */
  take(n: number): void {
    if (this.#seen + n > this.maxBytes) {
      this.#seen += n;
      throw new ByteCeilingExceeded(this.#seen, this.maxBytes);
    }
    this.#seen += n;
  }
}

/**
 * Yields a body's chunks, each counted against `budget` before it is handed on. The reader is
 * cancelled however the loop ends (refusal, abort, or the consumer stopping early).
 */
export async function* boundedChunks(
  body: ReadableStream<Uint8Array>,
  budget: ByteBudget,
  signal: AbortSignal,
): AsyncGenerator<Uint8Array, void, undefined> {
  const reader = body.getReader();
  // A body of the built-in client that ends with this very signal fails its pending read by
  // itself; any other (a caller's fetch) is raced against the signal and cancelled by it.
  const watch = (body as { [endsWithSignal]?: AbortSignal })[endsWithSignal] !== signal;
  const onAbort = () => {
    reader.cancel(signal.reason).catch(() => {});
  };
  if (watch) signal.addEventListener("abort", onAbort, { once: true });
  let finished = false;
  try {
    while (true) {
      if (signal.aborted) throw signal.reason;
      // Raced against the signal: a body whose source ignores cancellation cannot hold the read.
      const { done, value } = await (watch ? raceAbort(reader.read(), signal) : reader.read());
      if (signal.aborted) throw signal.reason;
      if (done) {
        finished = true;
        return;
      }
      budget.take(value.byteLength);
      yield value;
    }
  } catch (error) {
    if (signal.aborted) throw signal.reason;
    throw error;
  } finally {
    if (watch) signal.removeEventListener("abort", onAbort);
    if (!finished) reader.cancel().catch(() => {});
    try {
      reader.releaseLock();
    } catch {
      // A read still pending (raced away above) keeps the lock; the cancel already ended the source.
    }
  }
}

/** Reads a whole body under the budget, keeping fragments in an array and joining once. */
export async function readBounded(
  body: ReadableStream<Uint8Array>,
  budget: ByteBudget,
  signal: AbortSignal,
): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  let total = 0;
  for await (const chunk of boundedChunks(body, budget, signal)) {
    parts.push(chunk);
    total += chunk.byteLength;
  }
  if (parts.length === 1) return parts[0]!;
  const out = new Uint8Array(total);
  let offset = 0;
  for (const p of parts) {
    out.set(p, offset);
    offset += p.byteLength;
  }
  return out;
}

/** A body that was not valid UTF-8. */
export class BodyNotUtf8 extends Error {
  override readonly name = "BodyNotUtf8";
}
