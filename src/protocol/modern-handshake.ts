import { protocolError } from "../errors/failures.ts";
import { Interrupt } from "../errors/interrupt.ts";
import { UNSUPPORTED_VERSION } from "../errors/rpc-codes.ts";
import type { JsonObject } from "../jsonrpc/messages.ts";
import type { Reply, Session } from "../jsonrpc/session.ts";
import { classifyProbe, type EraEvidence } from "./era-evidence.ts";
import { type HandshakeContext, type Negotiated, serverFacts } from "./handshake.ts";
import { modernHeaders, withModernMeta } from "./modern-headers.ts";
import { chooseOrRefuse, legacyAllowed, modernRequestVersion, versionMismatch } from "./version-policy.ts";
import { eraOf, type ProtocolVersion } from "./versions.ts";

/** What a probe found: a modern server, negotiated; or a legacy one, and whether its channel is spent. */
export type ProbeOutcome = { negotiated: Negotiated } | { legacy: true; fresh: boolean };

/**
 * One request in the modern envelope: the `_meta` fields every 2026-07-28 request carries and,
 * on HTTP, the standard headers. Used for `server/discover` while establishing.
 */
export function modernRequest(
  session: Session,
  method: string,
  params: JsonObject | undefined,
  version: string,
  ctx: Pick<HandshakeContext, "clientInfo" | "capabilities" | "maxBytes">,
  signal: AbortSignal,
): Promise<Reply> {
  return session.request(method, withModernMeta(params, version, ctx.clientInfo, ctx.capabilities), {
    signal,
    maxBytes: ctx.maxBytes,
    headers: session.transport.mode === "stdio" ? undefined : modernHeaders(version, method, params),
    cancelOnAbort: false,
  });
}

/** A discover result at `version` as the negotiation's outcome; the transport is told the era. */
export function modernNegotiated(session: Session, version: ProtocolVersion, result: JsonObject): Negotiated {
  // Each modern request carries its own headers (modernHeaders); the server keeps no session.
  session.transport.negotiated?.({ headers: {}, stateless: true });
  return {
    era: "modern",
    protocolVersion: version,
    ...serverFacts(result, "modern"),
    discoverResult: result,
  };
}

/**
 * The modern handshake: `server/discover`, judged per the dual-era rules (N5). A discover result
 * with a version the policy takes is a modern server, negotiated. A -32022 that lists supported
 * versions is asked once more at the best of them. Anything that is legacy evidence returns
 * `legacy` (with `fresh` when the channel cannot be reused: N6), unless the policy allows no
 * legacy version (`version_mismatch`, or the probe's own timeout under a modern pin). Anything
 * that is no evidence at all is thrown as it came: the attempt labels it.
 */
export async function probe(session: Session, ctx: HandshakeContext): Promise<ProbeOutcome> {
  const stdio = session.transport.mode === "stdio";
  let version = modernRequestVersion(ctx.policy);
  for (let round = 0; round < 2; round++) {
    let outcome: { result: JsonObject } | { error: unknown };
    try {
      const reply = await ctx.stage(
        "probe",
        stdio ? ctx.probeTimeoutMs : ctx.handshakeTimeoutMs,
        stdio ? "probe_timeout" : "handshake_timeout",
        (signal) =>
          ctx.transient(signal, () =>
            modernRequest(session, "server/discover", undefined, version, ctx, signal),
          ),
      );
      outcome = { result: reply.result };
    } catch (error) {
      outcome = { error };
    }
    // On HTTP a silent server is an outage, not a legacy server.
    const silentHttp = !stdio && "error" in outcome && outcome.error instanceof Interrupt;
    const evidence: EraEvidence = silentHttp ? { era: "none" } : classifyProbe(outcome);
    ctx.evidence("probe", evidence);
    if (evidence.era === "none") throw "error" in outcome ? outcome.error : new Error("unreachable");
    if (evidence.era === "legacy") {
      // Under a modern pin a silent probe is a probe timeout, not a reason to try initialize.
      if (!legacyAllowed(ctx.policy) && "error" in outcome && outcome.error instanceof Interrupt)
        throw outcome.error;
      if (!legacyAllowed(ctx.policy))
        throw versionMismatch(ctx.policy, "only legacy versions (it does not speak 2026-07-28)", {
          stage: "probe",
          redactor: ctx.redactor,
        });
      return { legacy: true, fresh: evidence.fresh };
    }
    // A modern refusal other than -32022 with its list (-32020, -32021) is the server refusing
    // the request itself: it stands.
    if ("error" in outcome && !(evidence.rpcCode === UNSUPPORTED_VERSION && evidence.supported))
      throw outcome.error;
    const chosen = chooseOrRefuse(ctx.policy, evidence.supported, { stage: "probe", redactor: ctx.redactor });
    if (eraOf(chosen) === "legacy") return { legacy: true, fresh: false };
    if ("result" in outcome && chosen === version)
      return { negotiated: modernNegotiated(session, version, outcome.result) };
    version = chosen;
  }
  throw protocolError(
    { stage: "probe", phase: "discovery", redactor: ctx.redactor },
    "negotiation_failed",
    "the server kept refusing the protocol version it offered",
  );
}
