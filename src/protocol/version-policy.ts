import {
  bestCommon,
  eraOf,
  FIRST_MODERN_VERSION,
  KNOWN_VERSIONS,
  type ProtocolVersion,
  rank,
} from "./versions.ts";

/** How versions are negotiated: the spec's `auto`, an exact pin, or a ceiling. */
export type VersionPolicy =
  | { mode: "auto"; ceiling: ProtocolVersion }
  | { mode: "pin"; version: ProtocolVersion; ceiling: ProtocolVersion }
  | { mode: "ceiling"; ceiling: ProtocolVersion };

/** Whether the policy allows a modern (2026-07-28 and later) version at all. */
export function modernAllowed(p: VersionPolicy): boolean {
  return rank(p.ceiling) >= rank(FIRST_MODERN_VERSION);
}

/** Whether the policy allows a legacy (initialize-era) version at all. */
export function legacyAllowed(p: VersionPolicy): boolean {
  return p.mode !== "pin" || eraOf(p.version) === "legacy";
}

/** The version a modern request asks for: the pin, else the newest modern version under the ceiling. */
export function modernRequestVersion(p: VersionPolicy): ProtocolVersion {
  if (p.mode === "pin") return p.version;
  return (
    bestCommon(
      KNOWN_VERSIONS.filter((v) => eraOf(v) === "modern"),
      p.ceiling,
    ) ?? FIRST_MODERN_VERSION
  );
}

/**
 * The version to use from what a server listed: a pin only itself; otherwise the newest known
 * version at or below the ceiling. Undefined when there is none (a version mismatch).
 */
export function chooseVersion(p: VersionPolicy, supported: readonly unknown[]): ProtocolVersion | undefined {
  if (p.mode === "pin") return supported.includes(p.version) ? p.version : undefined;
  return bestCommon(supported, p.ceiling);
}

/** Whether a version a legacy server answered `initialize` with is acceptable. */
export function acceptsLegacyAnswer(p: VersionPolicy, offered: ProtocolVersion): boolean {
  if (p.mode === "pin") return offered === p.version;
  return rank(offered) <= rank(p.ceiling) && eraOf(offered) === "legacy";
}

/** The range the policy accepts, in words, for a version-mismatch message. */
export function describePolicy(p: VersionPolicy): string {
  return p.mode === "pin" ? `exactly ${p.version}` : `${KNOWN_VERSIONS[0]} to ${p.ceiling}`;
}
