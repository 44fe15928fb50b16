/** Edit distance (insertions, deletions, substitutions, and swaps of neighbours), for "did you mean". */
function distance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[][] = Array.from({ length: rows }, (_, i) =>
    Array.from({ length: cols }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        best = Math.min(best, d[i - 2]![j - 2]! + 1);
      d[i]![j] = best;
    }
  }
  return d[a.length]![b.length]!;
}

/**
 * The known names closest to what was typed, best first (at most `max`): near misses by edit
 * distance, and names that start with or contain what was typed. Only ever a suggestion: nothing
 * is run in place of what the user asked for.
 */
export function closest(typed: string, known: readonly string[], max = 3): string[] {
  const t = typed.toLowerCase();
  const scored: { name: string; score: number }[] = [];
  for (const name of new Set(known)) {
    const n = name.toLowerCase();
    const dist = distance(t, n);
    const near = dist <= Math.max(1, Math.floor(Math.max(t.length, n.length) / 3));
    const partial = t.length >= 3 && (n.startsWith(t) || t.startsWith(n) || n.includes(t));
    if (near || partial) scored.push({ name, score: near ? dist : dist + 10 });
  }
  return scored
    .sort((a, b) => a.score - b.score || a.name.localeCompare(b.name))
    .slice(0, max)
    .map((s) => s.name);
}

/** " (did you mean a or b?)", or nothing when no name is close. */
export function didYouMean(typed: string, known: readonly string[]): string {
  const names = closest(typed, known);
  if (names.length === 0) return "";
  const last = names.pop()!;
  return ` (did you mean ${names.length ? `${names.join(", ")} or ` : ""}${last}?)`;
}
