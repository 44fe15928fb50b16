/**
 * A byte ceiling was reached: thrown by whatever counts raw bytes (a body reader, a line or SSE
 * framer) before the chunk that would pass it is accepted.
 */
export class ByteCeilingExceeded extends Error {
  override readonly name = "ByteCeilingExceeded";
  constructor(
    /** Bytes read before the refusal, the refused chunk included: what was really observed. */
    readonly observedBytes: number,
    readonly maxBytes: number,
  ) {
    super("byte ceiling exceeded");
  }
}
