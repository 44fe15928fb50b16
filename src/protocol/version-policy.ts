import type { Stage } from "../errors/codes.ts";
import type { Redactor } from "../errors/redact.ts";
import { TetherError } from "../errors/tether-error.ts";
import {
  bestCommon,
  eraOf,
  FIRST_MODERN_VERSION,
  KNOWN_VERSIONS,
  LATEST_LEGACY_VERSION,
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

/** The version `initialize` asks for: the pin, else the newest legacy version under the ceiling. */
export function legacyRequestVersion(p: VersionPolicy): ProtocolVersion {
  if (p.mode === "pin") return p.version;
  return rank(p.ceiling) > rank(LATEST_LEGACY_VERSION) ? LATEST_LEGACY_VERSION : p.ceiling;
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

/** No version in common (N3, N4): names both the range the policy accepts and what the server offered. */
export function versionMismatch(
  p: VersionPolicy,
  offered: string,
  where: { stage: Stage; redactor: Redactor },
): TetherError {
  return new TetherError({
    code: "protocol",
    reason: "version_mismatch",
    stage: where.stage,
    phase: "discovery",
    message: `no protocol version in common: the client accepts ${describePolicy(p)}, the server offered ${offered}`,
    redactor: where.redactor,
  });
}

/** `chooseVersion`, or the mismatch naming what the server listed (its strings redacted and sanitized). */
export function chooseOrRefuse(
  p: VersionPolicy,
  supported: readonly unknown[] | undefined,
  where: { stage: Stage; redactor: Redactor },
): ProtocolVersion {
  const list = supported ?? [];
  const chosen = chooseVersion(p, list);
  if (chosen) return chosen;
  const offered =
    list
      .filter((v): v is string => typeof v === "string")
      .map((v) => where.redactor.serverText(v) ?? "")
      .join(", ") || "nothing usable";
  throw versionMismatch(p, offered, where);
}
