import type { Era } from "../errors/codes.ts";

/**
 * The protocol revisions this client knows, oldest first. Order comes from this table alone:
 * version strings are never compared as strings, and a string not in the table is unsupported.
 */
export const KNOWN_VERSIONS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"] as const;
export type ProtocolVersion = (typeof KNOWN_VERSIONS)[number];

export const LATEST_VERSION: ProtocolVersion = "2026-07-28";
export const LATEST_LEGACY_VERSION: ProtocolVersion = "2025-11-25";
export const FIRST_MODERN_VERSION: ProtocolVersion = "2026-07-28";

export function isKnownVersion(value: unknown): value is ProtocolVersion {
  return typeof value === "string" && (KNOWN_VERSIONS as readonly string[]).includes(value);
}

/** Position in the table; -1 for an unknown version. */
export function rank(version: string): number {
  return (KNOWN_VERSIONS as readonly string[]).indexOf(version);
}

export function eraOf(version: ProtocolVersion): Era {
  return rank(version) >= rank(FIRST_MODERN_VERSION) ? "modern" : "legacy";
}

/** True when `version` is known and at least `floor`. */
export function atLeast(version: string, floor: ProtocolVersion): boolean {
  const r = rank(version);
  return r !== -1 && r >= rank(floor);
}

/** The newest version in `offered` that we know and that is at or below `ceiling`. */
export function bestCommon(
  offered: readonly unknown[],
  ceiling: ProtocolVersion,
): ProtocolVersion | undefined {
  let best: ProtocolVersion | undefined;
  for (const v of offered) {
    if (!isKnownVersion(v) || rank(v) > rank(ceiling)) continue;
    if (!best || rank(v) > rank(best)) best = v;
  }
  return best;
}
