import { classifyFailure, type EraSign } from "../errors/classify.ts";

/** What one probe (or a handshake reply) says about the server's era. */
export type EraEvidence = EraSign;

/**
 * What the outcome of a `server/discover` probe says about the server's era, per the spec's
 * dual-era rules. A result is judged by its shape; a failure by the failure classifier
 * (src/errors/classify.ts), the one place the rules for statuses and codes are written. Pure.
 */
export function classifyProbe(
  outcome: { result: Record<string, unknown> } | { error: unknown },
): EraEvidence {
  if ("error" in outcome) return classifyFailure(outcome.error).era;
  const versions = outcome.result.supportedVersions;
  // A result without supportedVersions is no DiscoverResult: some legacy servers answer every
  // method with an empty result. Legacy, and the channel is fine to reuse.
  if (!Array.isArray(versions)) return { era: "legacy", evidence: "not_a_discover_result", fresh: false };
  return { era: "modern", evidence: "discover_result", supported: versions };
}
