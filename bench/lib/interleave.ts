/**
 * Runs several variants of one measurement in rotating order, so drift on a noisy machine (a
 * neighbour's burst, thermal steps, GC debt) lands on every variant alike rather than on whichever
 * ran last. Warm-up rounds run first and are discarded.
 */
export async function interleave<K extends string, S>(
  variants: Record<K, () => Promise<S>>,
  { warmup, runs }: { warmup: number; runs: number },
): Promise<Record<K, S[]>> {
  const names = Object.keys(variants) as K[];
  const out = Object.fromEntries(names.map((n) => [n, [] as S[]])) as Record<K, S[]>;
  for (let round = 0; round < warmup + runs; round++) {
    for (let i = 0; i < names.length; i++) {
      const name = names[(round + i) % names.length]!;
      const sample = await variants[name]();
      if (round >= warmup) out[name].push(sample);
    }
  }
  return out;
}
