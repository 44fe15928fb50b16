import { createHash } from "node:crypto";
import type { Era, TransportMode } from "../errors/codes.ts";

/** What a server turned out to speak last time: a hint for the order of tries, never a rule. */
export interface EraHint {
  era: Era;
  mode: TransportMode;
}

/**
 * Where hints are kept. The library keeps them in memory; the CLI keeps them in a small file.
 * A hint never overrides a pin or a ceiling, and it is dropped as soon as it proves wrong.
 */
export interface EraHintStore {
  get(key: string): EraHint | undefined;
  set(key: string, hint: EraHint): void;
  delete(key: string): void;
}

export class MemoryEraHints implements EraHintStore {
  readonly #map = new Map<string, EraHint>();
  get(key: string): EraHint | undefined {
    return this.#map.get(key);
  }
  set(key: string, hint: EraHint): void {
    this.#map.set(key, hint);
  }
  delete(key: string): void {
    this.#map.delete(key);
  }
}

/** Shared by every connect() in this process that brings no store of its own. */
export const processEraHints = new MemoryEraHints();

/**
 * The key for a server: its stdio command line, or its HTTP origin and path. Hashed, so a store
 * written to disk holds no argument, token or query value.
 */
export function eraHintKey(
  target: { kind: "stdio"; command: string; args: readonly string[] } | { kind: "http"; url: URL },
): string {
  const identity =
    target.kind === "stdio"
      ? JSON.stringify(["stdio", target.command, ...target.args])
      : JSON.stringify(["http", target.url.origin, target.url.pathname]);
  return createHash("sha256").update(identity).digest("hex").slice(0, 32);
}
