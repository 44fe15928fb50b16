import { classifyFailure } from "../errors/classify.ts";
import type { Era, Stage } from "../errors/codes.ts";
import { HttpRejection } from "../errors/http-rejection.ts";
import { UNSUPPORTED_VERSION } from "../errors/rpc-codes.ts";
import { TetherError } from "../errors/tether-error.ts";
import type { Session } from "../jsonrpc/session.ts";
import type { EraEvidence } from "../protocol/era-evidence.ts";
import { adoptableDiscover, type EraHint, eraHintKey, type StoredDiscover } from "../protocol/era-hints.ts";
import type { HandshakeContext, Negotiated } from "../protocol/handshake.ts";
import { legacyHandshake } from "../protocol/legacy-handshake.ts";
import { modernNegotiated, modernRequest, probe } from "../protocol/modern-handshake.ts";
import { chooseOrRefuse, legacyAllowed, modernAllowed, versionMismatch } from "../protocol/version-policy.ts";
import { eraOf } from "../protocol/versions.ts";
import type { AttemptSessions } from "./attempt-sessions.ts";
import type { Runtime } from "./runtime.ts";
import type { StageRunner } from "./stage-runner.ts";
import type { TransientRetry } from "./transient-retry.ts";
import type { HttpTarget, StdioTarget } from "./transports.ts";

/** What detection found: the session the handshake succeeded on, and what it negotiated. */
export interface Found {
  session: Session;
  negotiated: Negotiated;
}

/**
 * How one attempt finds the server's era and transport, within the version policy (N2 to N7):
 *
 * - stdio: spawn, probe with `server/discover` (unless the policy allows no modern version),
 *   then `initialize`; after a silent probe, or a process that exited on it, `initialize` goes
 *   to a fresh process (N6).
 * - HTTP: probe and `initialize` on Streamable HTTP; in `auto` mode, an `initialize` refused with
 *   legacy evidence (400/404/405 without a modern body) moves on to HTTP+SSE.
 * - A remembered legacy era goes straight to `initialize` on the transport it was found on; a
 *   failure that disproves it (src/errors/classify.ts) drops it, and detection starts over inside
 *   the same deadline. A hint never overrides a pin or a ceiling (N7).
 * - A remembered modern server's discover result is adopted without asking again when the
 *   connection lists its tools at once (`prefetchTools`): that listing is then the first exchange
 *   and proves the result; the attempt drops it and runs detection again if the server disagrees.
 */
export class Detection {
  readonly #rt: Runtime;
  readonly #runner: StageRunner;
  readonly #sessions: AttemptSessions;
  readonly #ctx: HandshakeContext;
  readonly #hintKey: string | undefined;
  #hintUse: "used" | "dropped" | "none" = "none";
  /** The stored discover result this attempt's session was established on, without asking. */
  #adopted: StoredDiscover | undefined;
  /** The era this attempt has evidence of, or is speaking: told to the recovery policy (R3). */
  era: Era | undefined;

  constructor(rt: Runtime, runner: StageRunner, sessions: AttemptSessions, transient: TransientRetry) {
    this.#rt = rt;
    this.#runner = runner;
    this.#sessions = sessions;
    const o = rt.options;
    this.#ctx = {
      policy: o.policy,
      clientInfo: o.clientInfo,
      capabilities: o.capabilities,
      maxBytes: o.discovery.maxResponseBytes,
      handshakeTimeoutMs: o.handshakeTimeoutMs,
      probeTimeoutMs: o.probeTimeoutMs,
      redactor: rt.redactor,
      stage: (stage, limitMs, reason, exchange) => runner.run(stage, limitMs, reason, exchange),
      transient: (signal, ask) => transient.run(signal, ask),
      evidence: (stage, evidence) => this.#evidence(stage, evidence),
    };
    const t = o.target;
    this.#hintKey = o.eraHints
      ? eraHintKey(t.kind === "stdio" ? t : { kind: "http", url: t.url })
      : undefined;
  }

  /** Whether a remembered era shortened detection (`used`), proved wrong (`dropped`), or was not there. */
  get hintUse(): "used" | "dropped" | "none" {
    return this.#hintUse;
  }

  /** Whether the session was established on a stored discover result, not yet confirmed by the server. */
  get adoptedDiscover(): boolean {
    return this.#adopted !== undefined;
  }

  async run(): Promise<Found> {
    const t = this.#rt.options.target;
    this.#adopted = undefined;
    const found =
      (await this.#storedModern(t)) ?? (t.kind === "stdio" ? await this.#stdio(t) : await this.#http(t));
    if (this.#hintKey) {
      const { negotiated } = found;
      // A result adopted from the store keeps its own age; a fresh one starts a new one.
      const discover: StoredDiscover | undefined =
        this.#adopted ??
        (negotiated.era === "modern" && negotiated.discoverResult
          ? {
              protocolVersion: negotiated.protocolVersion,
              result: negotiated.discoverResult,
              receivedAt: Date.now(),
            }
          : undefined);
      this.#rt.options.eraHints?.set(this.#hintKey, {
        era: negotiated.era,
        mode: found.session.transport.mode,
        ...(discover ? { discover } : {}),
      });
    }
    return found;
  }

  /**
   * The server disagreed with the discover result this attempt adopted: the hint goes, and the
   * next run detects afresh.
   */
  dropAdopted(): void {
    if (this.#hintKey) this.#rt.options.eraHints?.delete(this.#hintKey);
    this.#adopted = undefined;
    this.#hintUse = "dropped";
  }

  // ---- a stored modern discover result ----

  /**
   * A session on the transport a modern server was found on, negotiated from its stored discover
   * result, when there is one the policy takes and the tools are listed at once (that listing is
   * the exchange that proves it); else undefined and detection runs as usual.
   */
  async #storedModern(t: StdioTarget | HttpTarget): Promise<Found | undefined> {
    const o = this.#rt.options;
    if (!o.prefetchTools || !this.#hintKey || this.#hintUse === "dropped") return undefined;
    if (!modernAllowed(this.#ctx.policy)) return undefined;
    const hint = o.eraHints?.get(this.#hintKey);
    if (hint?.era !== "modern" || !hint.discover) return undefined;
    const mode = t.kind === "stdio" ? "stdio" : t.transport === "sse" ? undefined : "streamable-http";
    if (hint.mode !== mode) return undefined;
    const version = adoptableDiscover(hint.discover, this.#ctx.policy, Date.now());
    if (!version) return undefined;
    const session = t.kind === "stdio" ? await this.#spawn(t) : this.#sessions.streamableHttp(t);
    this.#hintUse = "used";
    this.#adopted = hint.discover;
    this.era = "modern";
    return { session, negotiated: modernNegotiated(session, version, hint.discover.result) };
  }

  // ---- stdio ----

  async #stdio(t: StdioTarget): Promise<Found> {
    if (this.#legacyHint()) {
      const session = await this.#spawn(t);
      try {
        this.#hintUse = "used";
        return await this.#legacy(session);
      } catch (error) {
        await this.#dropHintIfDisproved(error);
      }
    }
    let session = await this.#spawn(t);
    if (modernAllowed(this.#ctx.policy)) {
      const outcome = await probe(session, this.#ctx);
      if ("negotiated" in outcome) return { session, negotiated: outcome.negotiated };
      if (outcome.fresh) {
        // N6: initialize never goes to a process on which the probe's reply could still arrive.
        await this.#sessions.release(session);
        session = await this.#spawn(t);
      }
    }
    return await this.#legacy(session);
  }

  async #spawn(t: StdioTarget): Promise<Session> {
    const session = this.#sessions.stdio(t);
    await this.#runner.run("spawn", undefined, "spawn_timeout", (signal) => session.transport.start(signal));
    return session;
  }

  // ---- HTTP ----

  async #http(t: HttpTarget): Promise<Found> {
    if (t.transport === "sse") return await this.#sse(t);
    const hint = this.#legacyHint();
    if (hint?.mode === "sse" && t.transport === "auto") {
      try {
        this.#hintUse = "used";
        return await this.#sse(t);
      } catch (error) {
        await this.#dropHintIfDisproved(error);
      }
    }
    const session = this.#sessions.streamableHttp(t);
    if (hint?.mode === "streamable-http" && this.#hintUse !== "dropped") {
      try {
        this.#hintUse = "used";
        return await this.#streamableLegacy(t, session);
      } catch (error) {
        await this.#dropHintIfDisproved(error);
        return await this.#http(t);
      }
    }
    if (modernAllowed(this.#ctx.policy)) {
      const outcome = await probe(session, this.#ctx);
      if ("negotiated" in outcome) return { session, negotiated: outcome.negotiated };
    }
    return await this.#streamableLegacy(t, session);
  }

  /** `initialize` over Streamable HTTP; in `auto` mode a refusal that is legacy evidence moves on to HTTP+SSE. */
  async #streamableLegacy(t: HttpTarget, session: Session): Promise<Found> {
    try {
      return await this.#legacy(session);
    } catch (error) {
      const sign = classifyFailure(error).era;
      if (t.transport !== "auto" || sign.era !== "legacy" || sign.httpStatus === undefined) throw error;
      this.#evidence("initialize", sign);
      await this.#sessions.release(session);
      return await this.#sse(t, sign.httpStatus);
    }
  }

  /** HTTP+SSE (2024-11-05): the endpoint event, then `initialize`. `refusedStatus`: Streamable HTTP's refusal, if it came first. */
  async #sse(t: HttpTarget, refusedStatus?: number): Promise<Found> {
    const session = this.#sessions.sse(t);
    try {
      await this.#runner.run("sse_endpoint", undefined, "endpoint_timeout", (signal) =>
        session.transport.start(signal),
      );
    } catch (error) {
      // Refused again, and not for credentials or throttling: neither transport is usable.
      const label = classifyFailure(error);
      const refused =
        error instanceof HttpRejection &&
        error.status >= 400 &&
        error.status < 500 &&
        !label.security &&
        label.code !== "throttled";
      if (refusedStatus !== undefined && refused) {
        throw new TetherError({
          code: "protocol",
          reason: "no_usable_transport",
          stage: "sse_endpoint",
          phase: "discovery",
          httpStatus: error.status,
          message: `the server accepted neither Streamable HTTP (HTTP ${refusedStatus}) nor HTTP+SSE (HTTP ${error.status})`,
          cause: error,
          redactor: this.#rt.redactor,
        });
      }
      throw error;
    }
    return await this.#legacy(session);
  }

  // ---- the legacy handshake, and a modern server found by it ----

  /**
   * The legacy handshake. A -32022 that lists supported versions in answer to `initialize` means
   * the server is modern after all: it is asked `server/discover` at the best version the policy
   * takes, on the same session.
   */
  async #legacy(session: Session): Promise<Found> {
    const { policy } = this.#ctx;
    const where = { stage: this.#runner.stage, redactor: this.#rt.redactor };
    if (!legacyAllowed(policy))
      throw versionMismatch(policy, "nothing (the server was not asked: the pin is a modern version)", where);
    this.era = "legacy";
    try {
      return { session, negotiated: await legacyHandshake(session, this.#ctx) };
    } catch (error) {
      const sign = classifyFailure(error).era;
      if (sign.era !== "modern" || sign.rpcCode !== UNSUPPORTED_VERSION) throw error;
      this.#evidence("initialize", sign);
      const at = { stage: "initialize" as const, redactor: this.#rt.redactor };
      if (!modernAllowed(policy))
        throw versionMismatch(
          policy,
          String(sign.supported?.filter((v) => typeof v === "string").join(", ") ?? "modern versions only"),
          at,
        );
      const version = chooseOrRefuse(policy, sign.supported, at);
      if (eraOf(version) !== "modern") throw error;
      const discover = await this.#runner.run("probe", undefined, "probe_timeout", (signal) =>
        modernRequest(session, "server/discover", undefined, version, this.#ctx, signal),
      );
      return { session, negotiated: modernNegotiated(session, version, discover.result) };
    }
  }

  // ---- era evidence and hints ----

  #evidence(stage: Stage, evidence: EraEvidence): void {
    if (evidence.era === "none") return;
    this.era = evidence.era;
    this.#rt.events.emit({
      type: "era_evidence",
      stage,
      era: evidence.era,
      evidence: evidence.evidence,
      httpStatus: "httpStatus" in evidence ? evidence.httpStatus : undefined,
      rpcCode: evidence.rpcCode,
      elapsedMs: this.#runner.elapsedMs(),
      mode: this.#runner.mode,
      attempt: this.#runner.attempt,
    });
  }

  /** A remembered legacy era, if the policy allows legacy at all (a hint never overrides a pin or ceiling). */
  #legacyHint(): EraHint | undefined {
    if (!this.#hintKey || !legacyAllowed(this.#ctx.policy)) return undefined;
    const hint = this.#rt.options.eraHints?.get(this.#hintKey);
    return hint?.era === "legacy" ? hint : undefined;
  }

  /**
   * A failure under a hint: one that says the server is not what it was drops the hint and the
   * sessions opened under it; any other (the server is down, refuses us, time is up) stands.
   */
  async #dropHintIfDisproved(error: unknown): Promise<void> {
    if (!classifyFailure(error).disprovesHint) throw error;
    if (this.#hintKey) this.#rt.options.eraHints?.delete(this.#hintKey);
    this.#hintUse = "dropped";
    await this.#sessions.releaseAll();
  }
}
