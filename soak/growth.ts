// Whether a series of samples grows without bound: pure functions over numbers, so the verdicts
// can be read (and checked) apart from the workload that produced the samples.

export const MiB = 1024 * 1024;

/** Fewest samples a phase needs for its quarters to mean anything. */
export const MIN_SAMPLES = 8;

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export interface Trend {
  /** Median of the second quarter of the samples. */
  early: number;
  /** Median of the last quarter. */
  late: number;
  growth: number;
}

/**
 * The second quarter's median against the last quarter's. The first quarter is left out as
 * warm-up (JIT, connection pools and V8's heap sizing settle there); medians ignore the odd
 * sample taken next to a collection or a burst of sockets.
 */
export function trend(values: readonly number[]): Trend {
  const q = Math.floor(values.length / 4);
  const early = median(values.slice(q, 2 * q));
  const late = median(values.slice(values.length - q));
  return { early, late, growth: late - early };
}

export interface Check {
  /** What is bounded, e.g. `rss trend`. */
  name: string;
  ok: boolean;
  /** The figures, whatever the outcome: "+3.1 MiB (18.2 → 21.3 MiB; bound 30 MiB)". */
  detail: string;
}

export type Format = (value: number) => string;

export const mib: Format = (bytes) => `${(bytes / MiB).toFixed(1)} MiB`;
export const count: Format = (n) => String(Math.round(n * 10) / 10);
const signed = (format: Format, n: number) => (n >= 0 ? `+${format(n)}` : `-${format(-n)}`);

/** A trend whose growth must stay at or under `bound`. */
export function trendCheck(name: string, values: readonly number[], bound: number, format: Format): Check {
  if (values.length < MIN_SAMPLES) {
    return { name, ok: false, detail: `only ${values.length} samples (at least ${MIN_SAMPLES} needed)` };
  }
  const t = trend(values);
  return {
    name,
    ok: t.growth <= bound,
    detail: `${signed(format, t.growth)} (${format(t.early)} → ${format(t.late)}; bound ${format(bound)})`,
  };
}

/** Growth from one figure to another that must stay at or under `bound`. */
export function growthCheck(name: string, from: number, to: number, bound: number, format: Format): Check {
  return {
    name,
    ok: to - from <= bound,
    detail: `${signed(format, to - from)} (${format(from)} → ${format(to)}; bound ${format(bound)})`,
  };
}

/** Every value must equal `expected`: counts that have no reason to move at all. */
export function exactCheck(name: string, values: readonly number[], expected: number): Check {
  const off = values.filter((v) => v !== expected);
  return {
    name,
    ok: off.length === 0,
    detail:
      off.length === 0
        ? `${expected} at all ${values.length} samples`
        : `${off.length} of ${values.length} samples off ${expected} (min ${Math.min(...values)}, max ${Math.max(...values)})`,
  };
}
