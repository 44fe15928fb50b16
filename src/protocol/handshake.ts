import type { Era, Stage } from "../errors/codes.ts";
import type { Redactor } from "../errors/redact.ts";
import type { JsonObject } from "../jsonrpc/messages.ts";
import type { EraEvidence } from "./era-evidence.ts";
import type { VersionPolicy } from "./version-policy.ts";
import type { ProtocolVersion } from "./versions.ts";

/** What a handshake settled: the era and version, and what the server said about itself. */
export interface Negotiated {
  era: Era;
  protocolVersion: ProtocolVersion;
  serverInfo: { name?: string; version?: string } | undefined;
  capabilities: JsonObject;
  instructions: string | undefined;
  /** A modern server's discover result as received, kept with the era hint for later connections. */
  discoverResult?: JsonObject;
}

/**
 * Runs one exchange of a handshake as a stage of the attempt: on the smaller of `limitMs` and
 * what remains of the establishment deadline, timed and reported. When the stage's own limit is
 * the tighter one, its signal aborts with `reason` (e.g. `handshake_timeout`).
 */
export type StageRun = <T>(
  stage: Stage,
  limitMs: number | undefined,
  reason: string,
  exchange: (signal: AbortSignal) => Promise<T>,
) => Promise<T>;

/** What a handshake needs from the attempt that runs it. */
export interface HandshakeContext {
  policy: VersionPolicy;
  clientInfo: { name: string; version: string };
  /** The client capabilities, declared in `initialize` and in every modern request's `_meta`. */
  capabilities: JsonObject;
  /** The discovery phase's byte ceiling for one reply. */
  maxBytes: number;
  /** The per-attempt limit of one handshake exchange, in ms. */
  handshakeTimeoutMs: number;
  /** How long a stdio server's probe may stay silent before it counts as legacy, in ms. */
  probeTimeoutMs: number;
  redactor: Redactor;
  stage: StageRun;
  /** Asks again after a refusal the transient-retry policy waits out (429/503 with Retry-After); else rethrows. */
  transient: <T>(signal: AbortSignal, ask: () => Promise<T>) => Promise<T>;
  /** Told what each exchange showed about the server's era. */
  evidence: (stage: Stage, evidence: EraEvidence) => void;
}

function isObject(v: unknown): v is JsonObject {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function serverInfoOf(v: unknown): { name?: string; version?: string } | undefined {
  if (!isObject(v)) return undefined;
  return {
    name: typeof v.name === "string" ? v.name : undefined,
    version: typeof v.version === "string" ? v.version : undefined,
  };
}

/**
 * What a server said about itself in an `initialize` result (legacy) or a discover result
 * (modern, where its identity sits in `_meta`).
 */
export function serverFacts(
  result: JsonObject,
  era: Era,
): Pick<Negotiated, "serverInfo" | "capabilities" | "instructions"> {
  const meta = isObject(result._meta) ? result._meta : {};
  return {
    serverInfo: serverInfoOf(
      era === "modern" ? meta["io.modelcontextprotocol/serverInfo"] : result.serverInfo,
    ),
    capabilities: isObject(result.capabilities) ? result.capabilities : {},
    instructions: typeof result.instructions === "string" ? result.instructions : undefined,
  };
}
