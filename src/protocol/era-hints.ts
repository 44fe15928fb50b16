import { createHash } from "node:crypto";
import type { Era, TransportMode } from "../errors/codes.ts";
import { MemoryRecords } from "../files/record-store.ts";
import type { JsonObject } from "../jsonrpc/messages.ts";
import { chooseVersion, type VersionPolicy } from "./version-policy.ts";
import { eraOf, type ProtocolVersion } from "./versions.ts";

/** What a server turned out to speak last time: a hint for the order of tries, never a rule. */
export interface EraHint {
  era: Era;
  mode: TransportMode;
  /** A modern server's discover result, kept so a later connection can do without `server/discover`. */
  discover?: StoredDiscover;
}

/** A `server/discover` result as it was received, at the version it was asked at. */
export interface StoredDiscover {
  protocolVersion: string;
  result: JsonObject;
  /** When it was received (ms since the epoch). */
  receivedAt: number;
}

/**
 * How long a stored discover result is adopted. The server's `ttlMs` is not what bounds it: the
 * result only spares the round trip that picks the version, and every modern request carries that
 * version, so a server that no longer takes it says so on the first request (the result is then
 * dropped and discovery runs again in the same deadline). A day keeps capabilities and
 * instructions from going stale for long, as the official client's cache does.
 */
export const STORED_DISCOVER_MAX_AGE_MS = 24 * 60 * 60 * 1000;

/**
 * The version a stored discover result may be adopted at, or undefined: it must be a well-formed
 * record younger than a day (and not from the future), list the version it was asked at among
 * its `supportedVersions`, and that version must be the modern one the policy would choose from
 * that list now (a pin or ceiling changed since is obeyed).
 */
export function adoptableDiscover(
  stored: StoredDiscover | undefined,
  policy: VersionPolicy,
  now: number,
): ProtocolVersion | undefined {
  if (!stored || typeof stored !== "object") return undefined;
  const { protocolVersion, result, receivedAt } = stored;
  if (
    typeof receivedAt !== "number" ||
    !(now - receivedAt >= 0 && now - receivedAt <= STORED_DISCOVER_MAX_AGE_MS)
  )
    return undefined;
  if (typeof result !== "object" || result === null || Array.isArray(result)) return undefined;
  const supported = result.supportedVersions;
  if (!Array.isArray(supported) || !supported.includes(protocolVersion)) return undefined;
  const chosen = chooseVersion(policy, supported);
  return chosen !== undefined && chosen === protocolVersion && eraOf(chosen) === "modern"
    ? chosen
    : undefined;
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

export class MemoryEraHints extends MemoryRecords<EraHint> implements EraHintStore {}

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
