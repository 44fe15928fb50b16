import { authorizedFetch } from "../auth/authorized-fetch.ts";
import { serveBounded } from "../client/handlers.ts";
import type { Stage } from "../errors/codes.ts";
import { protocolError } from "../errors/failures.ts";
import { TetherError } from "../errors/tether-error.ts";
import { toPublicError } from "../errors/to-public.ts";
import type { JsonObject } from "../jsonrpc/messages.ts";
import { RpcReplyError } from "../jsonrpc/messages.ts";
import { Session } from "../jsonrpc/session.ts";
import { sleep } from "../lifecycle/abort.ts";
import type { Deadline } from "../lifecycle/deadline.ts";
import { Interrupt } from "../lifecycle/interrupt.ts";
import type { ResolvedOptions } from "../options/resolve.ts";
import { classifyProbe, type EraEvidence } from "../protocol/era-evidence.ts";
import { type EraHint, eraHintKey } from "../protocol/era-hints.ts";
import { modernHeaders, withModernMeta } from "../protocol/modern-headers.ts";
import {
  acceptsLegacyAnswer,
  chooseVersion,
  describePolicy,
  legacyAllowed,
  modernAllowed,
  modernRequestVersion,
} from "../protocol/version-policy.ts";
import {
  eraOf,
  isKnownVersion,
  LATEST_LEGACY_VERSION,
  type ProtocolVersion,
  rank,
} from "../protocol/versions.ts";
import { HttpRejection } from "../transport/http-rejection.ts";
import { LegacySseTransport } from "../transport/legacy-sse.ts";
import { StdioTransport } from "../transport/stdio.ts";
import { StreamableHttpTransport } from "../transport/streamable-http.ts";
import type { Era, Transport, TransportMode } from "../transport/transport.ts";

export interface StageTiming {
  stage: Stage;
  durationMs: number;
  ok: boolean;
}

/** What a successful attempt hands to the client. */
export interface Established {
  session: Session;
  mode: TransportMode;
  era: Era;
  protocolVersion: ProtocolVersion;
  serverInfo: { name?: string; version?: string } | undefined;
  capabilities: JsonObject;
  instructions: string | undefined;
  stages: StageTiming[];
  /** Whether a remembered era shortened detection: `used`, `dropped` (it proved wrong) or `none`. */
  eraHint: "used" | "dropped" | "none";
  /** Which attempt succeeded (1 unless recovery made a fresh one). */
  attempt: number;
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
 * One attempt at establishing: a fresh transport, a fresh session, and negotiation on it, all
 * on the establishment deadline. Every session it opens is closed if the attempt fails.
 */
export class Attempt {
  readonly #o: ResolvedOptions;
  readonly #deadline: Deadline;
  readonly #number: number;
  readonly #opened: Session[] = [];
  readonly stages: StageTiming[] = [];
  /** The stage in progress or last entered: where a failure is reported. */
  stage: Stage = "spawn";
  /** The era this attempt has evidence of, or is speaking: told to the recovery policy (R3). */
  era: Era | undefined;
  #hintUse: "used" | "dropped" | "none" = "none";
  #transientLeft: number;
  readonly #hintKey: string | undefined;

  constructor(options: ResolvedOptions, deadline: Deadline, attempt: number) {
    this.#o = options;
    this.#deadline = deadline;
    this.#number = attempt;
    this.#transientLeft = options.transientRetries;
    const t = options.target;
    this.#hintKey = options.eraHints
      ? eraHintKey(t.kind === "stdio" ? t : { kind: "http", url: t.url })
      : undefined;
  }

  /** A remembered legacy era, if the policy allows legacy at all (a hint never overrides a pin or ceiling). */
  #legacyHint(): EraHint | undefined {
    if (!this.#hintKey || !this.#legacyAllowed) return undefined;
    const hint = this.#o.eraHints?.get(this.#hintKey);
    return hint?.era === "legacy" ? hint : undefined;
  }

  #dropHint(): void {
    if (this.#hintKey) this.#o.eraHints?.delete(this.#hintKey);
    this.#hintUse = "dropped";
  }

  /** Whether a failure under a hint says the hint was wrong (rather than that the server is down). */
  #disproves(error: unknown): boolean {
    if (error instanceof Interrupt) return error.kind === "stage";
    if (error instanceof RpcReplyError) return true;
    if (error instanceof HttpRejection)
      return error.status === 400 || error.status === 404 || error.status === 405;
    if (error instanceof TetherError)
      return error.code === "connection" && error.reason !== "refused" && !error.security;
    return false;
  }

  /** The HTTP transports' fetch: the caller's, carrying the server's bearer token when auth is on. */
  get #httpFetch() {
    const { authorizer, fetch } = this.#o;
    return authorizer ? authorizedFetch(fetch, authorizer) : fetch;
  }

  get #mode(): TransportMode {
    const t = this.#o.target;
    return t.kind === "stdio" ? "stdio" : t.transport === "sse" ? "sse" : "streamable-http";
  }

  async run(): Promise<Established> {
    try {
      const established = this.#o.target.kind === "stdio" ? await this.#stdio() : await this.#http();
      if (this.#hintKey)
        this.#o.eraHints?.set(this.#hintKey, { era: established.era, mode: established.mode });
      return established;
    } catch (error) {
      const primary = toPublicError(error, {
        stage: this.stage,
        phase: "discovery",
        redactor: this.#o.redactor,
      });
      await this.#disposeAll(primary);
      throw primary;
    }
  }

  async #disposeAll(primary: TetherError): Promise<void> {
    for (const s of this.#opened.splice(0)) {
      try {
        await s.close(primary);
      } catch (e) {
        primary.cleanupErrors.push(e);
      }
      primary.cleanupErrors.push(...s.transport.cleanupErrors);
    }
  }

  /** Runs one stage on min(its limit, what remains), timing it and reporting it. */
  async #stageRun<T>(
    stage: Stage,
    limitMs: number | undefined,
    reason: string,
    fn: (signal: AbortSignal) => Promise<T>,
  ): Promise<T> {
    const signal = this.#deadline.signal;
    if (signal.aborted) throw signal.reason;
    this.stage = stage;
    for (const s of this.#opened) s.stage = stage;
    const started = this.#deadline.elapsedMs();
    const events = this.#o.events;
    events.emit({ type: "stage_start", stage, elapsedMs: started, mode: this.#mode, attempt: this.#number });
    const scope = this.#deadline.stage(limitMs, reason);
    let ok = false;
    try {
      const value = await fn(scope.signal);
      ok = true;
      return value;
    } catch (error) {
      const e = error instanceof Interrupt || error instanceof TetherError ? error : undefined;
      events.emit({
        type: "stage_end",
        stage,
        ok: false,
        durationMs: this.#deadline.elapsedMs() - started,
        elapsedMs: this.#deadline.elapsedMs(),
        mode: this.#mode,
        attempt: this.#number,
        code:
          e instanceof TetherError
            ? e.code
            : e instanceof Interrupt
              ? e.kind === "caller"
                ? "cancelled"
                : "timeout"
              : undefined,
        reason:
          e instanceof TetherError
            ? e.reason
            : e instanceof Interrupt
              ? e.kind === "caller"
                ? "cancelled"
                : e.kind === "deadline"
                  ? "deadline_exceeded"
                  : e.reason
              : error instanceof HttpRejection
                ? `http_${error.status}`
                : error instanceof RpcReplyError
                  ? "rpc_error"
                  : undefined,
        httpStatus:
          error instanceof HttpRejection ? error.status : e instanceof TetherError ? e.httpStatus : undefined,
        rpcCode:
          error instanceof RpcReplyError
            ? error.error.code
            : e instanceof TetherError
              ? e.rpcCode
              : undefined,
        // A stage's own limit is not a cancellation: only the caller and the overall deadline are.
        cancellation:
          e instanceof Interrupt && e.kind !== "stage"
            ? e.source
            : e instanceof TetherError
              ? e.cancellation
              : undefined,
      });
      throw error;
    } finally {
      scope.dispose();
      const durationMs = this.#deadline.elapsedMs() - started;
      this.stages.push({ stage, durationMs, ok });
      if (ok) {
        events.emit({
          type: "stage_end",
          stage,
          ok,
          durationMs,
          elapsedMs: this.#deadline.elapsedMs(),
          mode: this.#mode,
          attempt: this.#number,
        });
      }
    }
  }

  /**
   * Waits out a 429 or 503 that named Retry-After and asks again, when the caller opted in and
   * the wait fits in what remains; the same request on the same transport, so nothing about the
   * era or transport changes.
   */
  async #transient<T>(signal: AbortSignal, ask: () => Promise<T>): Promise<T> {
    for (;;) {
      try {
        return await ask();
      } catch (error) {
        const wait =
          error instanceof HttpRejection && (error.status === 429 || error.status === 503)
            ? error.retryAfterMs
            : undefined;
        if (wait === undefined || this.#transientLeft <= 0 || wait >= this.#deadline.remainingMs())
          throw error;
        this.#transientLeft--;
        await sleep(this.#o.clock, wait, signal);
      }
    }
  }

  /**
   * The frame ceiling of a shared stream (stdio, HTTP+SSE), bound to its session once there is
   * one: frames are refused as they are read once they pass what any pending request may take.
   */
  #sharedCeiling(): { get: () => number; bind: (session: Session) => Session } {
    let session: Session | undefined;
    const fallback = Math.max(
      this.#o.discovery.maxResponseBytes,
      this.#o.call.maxResponseBytes,
      this.#o.maxFrameBytes,
    );
    return {
      get: () => session?.frameCeiling() ?? fallback,
      bind: (s) => {
        session = s;
        return s;
      },
    };
  }

  #track(transport: Transport): Session {
    const started = this.#deadline.elapsedMs();
    const session = new Session(transport, {
      redactor: this.#o.redactor,
      maxFrameBytes: this.#o.maxFrameBytes,
      // A handler runs under the call phase's time budget, as a call does (M4).
      serve: (method, params, signal) =>
        serveBounded(this.#o.handlers, method, params, signal, {
          clock: this.#o.clock,
          timeoutMs: this.#o.call.timeoutMs,
        }),
      onClosed: (closure) =>
        this.#o.events.emit({
          type: "closed",
          closure:
            closure.closure ??
            (closure.code === "limit"
              ? "limit"
              : closure.code === "protocol"
                ? "protocol"
                : "closed_by_client"),
          elapsedMs: this.#deadline.elapsedMs() - started,
          mode: transport.mode,
          attempt: this.#number,
        }),
      onInboundDropped: (drops) =>
        this.#o.events.emit({
          type: "inbound_dropped",
          requests: drops.requests,
          notifications: drops.notifications,
          elapsedMs: this.#deadline.elapsedMs() - started,
          mode: transport.mode,
          attempt: this.#number,
        }),
      clock: this.#o.clock,
    });
    this.#opened.push(session);
    return session;
  }

  async #releaseAll(): Promise<void> {
    for (const s of this.#opened.splice(0)) await s.close();
  }

  async #release(session: Session): Promise<void> {
    const i = this.#opened.indexOf(session);
    if (i !== -1) this.#opened.splice(i, 1);
    await session.close();
  }

  #evidence(stage: Stage, evidence: EraEvidence): void {
    if (evidence.era === "none") return;
    this.era = evidence.era;
    this.#o.events.emit({
      type: "era_evidence",
      stage,
      era: evidence.era,
      evidence: evidence.evidence,
      httpStatus: "httpStatus" in evidence ? evidence.httpStatus : undefined,
      rpcCode: evidence.rpcCode,
      elapsedMs: this.#deadline.elapsedMs(),
      mode: this.#mode,
      attempt: this.#number,
    });
  }

  get #modernAllowed(): boolean {
    return modernAllowed(this.#o.policy);
  }

  get #legacyAllowed(): boolean {
    return legacyAllowed(this.#o.policy);
  }

  /** The version to ask for in a modern request. */
  get #modernRequest(): ProtocolVersion {
    return modernRequestVersion(this.#o.policy);
  }

  #mismatch(offered: string): TetherError {
    return new TetherError({
      code: "protocol",
      reason: "version_mismatch",
      stage: this.stage,
      phase: "discovery",
      message: `no protocol version in common: the client accepts ${describePolicy(this.#o.policy)}, the server offered ${offered}`,
      redactor: this.#o.redactor,
    });
  }

  /** Chooses a version from what a modern server listed, within the policy. */
  #choose(supported: readonly unknown[] | undefined): ProtocolVersion {
    const list = supported ?? [];
    const chosen = chooseVersion(this.#o.policy, list);
    if (chosen) return chosen;
    const offered =
      list
        .filter((v): v is string => typeof v === "string")
        .map((v) => this.#o.redactor.serverText(v) ?? "")
        .join(", ") || "nothing usable";
    throw this.#mismatch(offered);
  }

  // ---- stdio ----

  #newStdio(): Session {
    const t = this.#o.target;
    if (t.kind !== "stdio") throw new Error("unreachable");
    const ceiling = this.#sharedCeiling();
    return ceiling.bind(
      this.#track(
        new StdioTransport({
          command: t.command,
          args: t.args,
          env: t.env,
          cwd: t.cwd,
          stderr: t.stderr,
          inheritEnv: t.inheritEnv,
          maxLineBytes: ceiling.get,
          redactor: this.#o.redactor,
          spawn: this.#o.spawn,
        }),
      ),
    );
  }

  async #spawn(): Promise<Session> {
    const session = this.#newStdio();
    await this.#stageRun("spawn", undefined, "spawn_timeout", (signal) => session.transport.start(signal));
    return session;
  }

  async #stdio(): Promise<Established> {
    if (this.#legacyHint()) {
      const session = await this.#spawn();
      try {
        this.#hintUse = "used";
        return await this.#legacy(session);
      } catch (error) {
        if (!this.#disproves(error)) throw error;
        // The server is not what it was: detect again, on a fresh process, inside the same deadline.
        this.#dropHint();
        await this.#releaseAll();
      }
    }
    let session = await this.#spawn();
    if (this.#modernAllowed) {
      const outcome = await this.#probe(session);
      if (outcome.established) return outcome.established;
      if (outcome.fresh) {
        // N6: initialize never goes to a process on which the probe's reply could still arrive.
        await this.#release(session);
        session = await this.#spawn();
      }
    }
    return await this.#legacy(session);
  }

  // ---- HTTP ----

  async #http(): Promise<Established> {
    const t = this.#o.target;
    if (t.kind !== "http") throw new Error("unreachable");
    if (t.transport === "sse") return await this.#sse();
    const hint = this.#legacyHint();
    if (hint?.mode === "sse" && t.transport === "auto") {
      try {
        this.#hintUse = "used";
        return await this.#sse();
      } catch (error) {
        if (!this.#disproves(error)) throw error;
        this.#dropHint();
        await this.#releaseAll();
      }
    }
    const transport = new StreamableHttpTransport({
      url: t.url,
      headers: t.headers,
      fetch: this.#httpFetch,
      redactor: this.#o.redactor,
      maxFrameBytes: this.#o.maxFrameBytes,
      listen: this.#o.listen,
      clock: this.#o.clock,
    });
    const session = this.#track(transport);
    if (hint?.mode === "streamable-http" && this.#hintUse !== "dropped") {
      try {
        this.#hintUse = "used";
        return await this.#streamableLegacy(session);
      } catch (error) {
        if (!this.#disproves(error)) throw error;
        // The remembered era proved wrong: forget it and detect from the start, same deadline.
        this.#dropHint();
        await this.#releaseAll();
        return await this.#http();
      }
    }
    if (this.#modernAllowed) {
      const outcome = await this.#probe(session);
      if (outcome.established) return outcome.established;
    }
    return await this.#streamableLegacy(session);
  }

  /** `initialize` over Streamable HTTP; in `auto` mode a 400/404/405 moves on to HTTP+SSE. */
  async #streamableLegacy(session: Session): Promise<Established> {
    const t = this.#o.target;
    if (t.kind !== "http") throw new Error("unreachable");
    try {
      return await this.#legacy(session);
    } catch (error) {
      const fallback =
        t.transport === "auto" &&
        error instanceof HttpRejection &&
        (error.status === 400 || error.status === 404 || error.status === 405) &&
        !(error.rpc && error.rpc.code === -32022);
      if (!fallback) throw error;
      this.#evidence("initialize", {
        era: "legacy",
        evidence: `http_${error.status}_${error.bodyKind}`,
        fresh: true,
        httpStatus: error.status,
      });
      await this.#release(session);
      return await this.#sse(error);
    }
  }

  async #sse(after?: HttpRejection): Promise<Established> {
    const t = this.#o.target;
    if (t.kind !== "http") throw new Error("unreachable");
    const ceiling = this.#sharedCeiling();
    const session = ceiling.bind(
      this.#track(
        new LegacySseTransport({
          url: t.url,
          headers: t.headers,
          fetch: this.#httpFetch,
          redactor: this.#o.redactor,
          maxEventBytes: ceiling.get,
        }),
      ),
    );
    try {
      await this.#stageRun("sse_endpoint", undefined, "endpoint_timeout", (signal) =>
        session.transport.start(signal),
      );
    } catch (error) {
      if (
        after &&
        error instanceof HttpRejection &&
        error.status >= 400 &&
        error.status < 500 &&
        error.status !== 401 &&
        error.status !== 403 &&
        error.status !== 429
      ) {
        throw new TetherError({
          code: "protocol",
          reason: "no_usable_transport",
          stage: "sse_endpoint",
          phase: "discovery",
          httpStatus: error.status,
          message: `the server accepted neither Streamable HTTP (HTTP ${after.status}) nor HTTP+SSE (HTTP ${error.status})`,
          cause: error,
        });
      }
      throw error;
    }
    return await this.#legacy(session);
  }

  // ---- negotiation ----

  /** Sends `server/discover`; returns an established modern session, or what to do next. */
  async #probe(session: Session): Promise<{ established?: Established; fresh: boolean }> {
    let version = this.#modernRequest;
    for (let round = 0; round < 2; round++) {
      let outcome: { result: JsonObject } | { error: unknown };
      try {
        const stdio = session.transport.mode === "stdio";
        const reply = await this.#stageRun(
          "probe",
          stdio ? this.#o.probeTimeoutMs : this.#o.handshakeTimeoutMs,
          stdio ? "probe_timeout" : "handshake_timeout",
          (signal) =>
            this.#transient(signal, () =>
              this.#modernRequestOn(session, "server/discover", undefined, version, signal),
            ),
        );
        outcome = { result: reply.result };
      } catch (error) {
        outcome = { error };
      }
      // On HTTP a silent server is an outage, not a legacy server.
      const silentHttp =
        session.transport.mode !== "stdio" && "error" in outcome && outcome.error instanceof Interrupt;
      const evidence: EraEvidence = silentHttp ? { era: "none" } : classifyProbe(outcome);
      this.#evidence("probe", evidence);
      if (evidence.era === "none") throw "error" in outcome ? outcome.error : new Error("unreachable");
      if (evidence.era === "legacy") {
        // Under a modern pin a silent probe is a probe timeout, not a reason to try initialize.
        if (!this.#legacyAllowed && "error" in outcome && outcome.error instanceof Interrupt)
          throw outcome.error;
        if (!this.#legacyAllowed) throw this.#mismatch("only legacy versions (it does not speak 2026-07-28)");
        return { fresh: evidence.fresh };
      }
      if ("error" in outcome && !(evidence.rpcCode === -32022 && evidence.supported)) {
        // -32020 or -32021: a modern server that refused the request itself.
        throw outcome.error;
      }
      const chosen = this.#choose(evidence.supported);
      if (eraOf(chosen) === "legacy") return { fresh: false };
      if ("result" in outcome && chosen === version)
        return { fresh: false, established: this.#modernEstablished(session, version, outcome.result) };
      version = chosen;
    }
    throw protocolError(
      { stage: "probe", phase: "discovery", redactor: this.#o.redactor },
      "negotiation_failed",
      "the server kept refusing the protocol version it offered",
    );
  }

  #modernRequestOn(
    session: Session,
    method: string,
    params: JsonObject | undefined,
    version: string,
    signal: AbortSignal,
  ) {
    return session.request(
      method,
      withModernMeta(params, version, this.#o.clientInfo, this.#o.capabilities),
      {
        signal,
        maxBytes: this.#o.discovery.maxResponseBytes,
        headers: session.transport.mode === "stdio" ? undefined : modernHeaders(version, method, params),
        cancelOnAbort: false,
      },
    );
  }

  #modernEstablished(session: Session, version: ProtocolVersion, result: JsonObject): Established {
    session.transport.negotiated?.(version, "modern");
    const meta = isObject(result._meta) ? result._meta : {};
    return this.#ready(session, {
      era: "modern",
      protocolVersion: version,
      serverInfo: serverInfoOf(meta["io.modelcontextprotocol/serverInfo"]),
      capabilities: isObject(result.capabilities) ? result.capabilities : {},
      instructions: typeof result.instructions === "string" ? result.instructions : undefined,
    });
  }

  #ready(
    session: Session,
    negotiated: Pick<Established, "era" | "protocolVersion" | "serverInfo" | "capabilities" | "instructions">,
  ): Established {
    const i = this.#opened.indexOf(session);
    if (i !== -1) this.#opened.splice(i, 1);
    session.markOpen();
    session.phase = "call";
    session.stage = "call";
    return {
      session,
      mode: session.transport.mode,
      stages: this.stages,
      eraHint: this.#hintUse,
      attempt: this.#number,
      ...negotiated,
    };
  }

  /** The `initialize` handshake and `notifications/initialized`. */
  async #legacy(session: Session): Promise<Established> {
    const p = this.#o.policy;
    if (!this.#legacyAllowed)
      throw this.#mismatch("nothing (the server was not asked: the pin is a modern version)");
    this.era = "legacy";
    const requested: ProtocolVersion =
      p.mode === "pin"
        ? p.version
        : rank(p.ceiling) > rank(LATEST_LEGACY_VERSION)
          ? LATEST_LEGACY_VERSION
          : p.ceiling;
    let reply: { result: JsonObject };
    try {
      reply = await this.#stageRun("initialize", this.#o.handshakeTimeoutMs, "handshake_timeout", (signal) =>
        this.#transient(signal, () =>
          session.request(
            "initialize",
            {
              protocolVersion: requested,
              capabilities: this.#o.capabilities,
              clientInfo: this.#o.clientInfo,
            },
            { signal, maxBytes: this.#o.discovery.maxResponseBytes, cancelOnAbort: false },
          ),
        ),
      );
    } catch (error) {
      const rpc =
        error instanceof RpcReplyError ? error.error : error instanceof HttpRejection ? error.rpc : undefined;
      if (rpc && rpc.code === -32022) {
        // The server is modern after all.
        const evidence = classifyProbe({ error: new RpcReplyError(rpc) });
        if (evidence.era === "modern") {
          this.#evidence("initialize", evidence);
          if (!this.#modernAllowed)
            throw this.#mismatch(
              String(
                evidence.supported?.filter((v) => typeof v === "string").join(", ") ?? "modern versions only",
              ),
            );
          const version = this.#choose(evidence.supported);
          if (eraOf(version) === "modern") {
            const discover = await this.#stageRun("probe", undefined, "probe_timeout", (signal) =>
              this.#modernRequestOn(session, "server/discover", undefined, version, signal),
            );
            return this.#modernEstablished(session, version, discover.result);
          }
        }
      }
      throw error;
    }
    const offered = reply.result.protocolVersion;
    if (!isKnownVersion(offered))
      throw this.#mismatch(
        typeof offered === "string" ? (this.#o.redactor.serverText(offered) ?? "?") : "no version",
      );
    if (!acceptsLegacyAnswer(p, offered)) throw this.#mismatch(offered);
    session.transport.negotiated?.(offered, "legacy");
    await this.#stageRun("initialized", undefined, "initialized_timeout", (signal) =>
      session.notify("notifications/initialized", undefined, signal),
    );
    return this.#ready(session, {
      era: "legacy",
      protocolVersion: offered,
      serverInfo: serverInfoOf(reply.result.serverInfo),
      capabilities: isObject(reply.result.capabilities) ? reply.result.capabilities : {},
      instructions: typeof reply.result.instructions === "string" ? reply.result.instructions : undefined,
    });
  }
}
