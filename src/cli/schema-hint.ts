/**
 * What points a person at a tool's schema after an argument error or a tool error, shared by the
 * whole CLI's `call` and the small entry of a call on `@NAME`, so both say the same.
 */

/** The reasons of a `config` error about a tool's arguments, after which its schema helps. */
export const ARGUMENT_REASONS: ReadonlySet<string> = new Set([
  "unknown_argument",
  "invalid_argument",
  "missing_argument",
  "invalid_args",
]);

/** A word as a POSIX shell reads it back: as it is when it is plain, else in single quotes. */
export function shellWord(word: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** `<command line> shows its schema`, for the command line of `tether tool` on the same target. */
export function schemaHintFor(toolCommand: string): string {
  return `${toolCommand} shows its schema`;
}
