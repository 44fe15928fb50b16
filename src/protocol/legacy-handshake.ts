import type { ChannelTerms } from "../jsonrpc/channel.ts";
import type { Session } from "../jsonrpc/session.ts";
import { type HandshakeContext, type Negotiated, serverFacts } from "./handshake.ts";
import { acceptsLegacyAnswer, legacyRequestVersion, versionMismatch } from "./version-policy.ts";
import { atLeast, isKnownVersion, type ProtocolVersion } from "./versions.ts";

/**
 * What a legacy session asks of its transport: the server keeps a session, and from 2025-06-18 on
 * every later HTTP request names the negotiated version in MCP-Protocol-Version.
 */
export function legacyTerms(version: ProtocolVersion): ChannelTerms {
  return {
    headers: atLeast(version, "2025-06-18") ? { "mcp-protocol-version": version } : {},
    stateless: false,
  };
}

/**
 * The legacy handshake on an open session: `initialize` at the version the policy asks for, the
 * answer checked against the policy (N1, N3, N4), then `notifications/initialized`. Throws what
 * the exchange failed with, unlabelled (the attempt labels it), or `version_mismatch`.
 */
export async function legacyHandshake(session: Session, ctx: HandshakeContext): Promise<Negotiated> {
  const requested = legacyRequestVersion(ctx.policy);
  const reply = await ctx.stage("initialize", ctx.handshakeTimeoutMs, "handshake_timeout", (signal) =>
    ctx.transient(signal, () =>
      session.request(
        "initialize",
        { protocolVersion: requested, capabilities: ctx.capabilities, clientInfo: ctx.clientInfo },
        // Abandoning an initialize sends no cancellation: the spec forbids cancelling it.
        { signal, maxBytes: ctx.maxBytes, cancelOnAbort: false },
      ),
    ),
  );
  const where = { stage: "initialize" as const, redactor: ctx.redactor };
  const offered = reply.result.protocolVersion;
  if (!isKnownVersion(offered))
    throw versionMismatch(
      ctx.policy,
      typeof offered === "string" ? (ctx.redactor.serverText(offered) ?? "?") : "no version",
      where,
    );
  if (!acceptsLegacyAnswer(ctx.policy, offered)) throw versionMismatch(ctx.policy, offered, where);
  session.transport.negotiated?.(legacyTerms(offered));
  await ctx.stage("initialized", undefined, "initialized_timeout", (signal) =>
    session.notify("notifications/initialized", undefined, signal),
  );
  return { era: "legacy", protocolVersion: offered, ...serverFacts(reply.result, "legacy") };
}
