import type { CallEffect, CancellationSource, ClosureCategory, ErrorCode, Phase, Stage } from "./codes.ts";
import { baseRedactor, type Redactor } from "./redact.ts";
import { rescrubTail } from "./stderr-tail.ts";
import type { UrlElicitationRequired } from "./url-elicitation.ts";

/** The limits in force when something failed: names of options and their values. */
export type Limits = Readonly<Record<string, number>>;

export interface TetherErrorInit {
  code: ErrorCode;
  /** A stable, more specific word than `code` (e.g. `deadline_exceeded`, `eof`, `version_mismatch`). */
  reason: string;
  stage: Stage;
  phase: Phase;
  /** Written by us; it is scrubbed and sanitized all the same. Never a lower layer's message. */
  message: string;
  limits?: Limits;
  observedBytes?: number;
  httpStatus?: number;
  rpcCode?: number;
  /** The server's own error text; redacted, sanitized for a terminal and truncated before it is stored. */
  rpcMessage?: string;
  attempt?: number;
  effect?: CallEffect;
  closure?: ClosureCategory;
  cancellation?: CancellationSource;
  /** Marks a failure that recovery must never retry (credentials, TLS, the application's own veto). */
  security?: boolean;
  /** The last lines of a stdio server's stderr, when it died during establishment (see stderr-tail.ts). */
  stderrTail?: string;
  /** A stdio server that exited with a failure status, or was killed, before it answered anything. */
  failedAtStart?: boolean;
  /** A -32042 error's URL elicitations, already checked (url-elicitation.ts). */
  urlElicitations?: readonly UrlElicitationRequired[];
  cause?: unknown;
  redactor?: Redactor;
}

/** The record the CLI prints and hosts hand on: the error's public face, and nothing else. */
export interface ErrorRecord {
  type: "error";
  code: ErrorCode;
  reason: string;
  stage: Stage;
  phase: Phase;
  message: string;
  attempt: number;
  attempts?: number;
  limits?: Limits;
  observedBytes: number | null;
  httpStatus: number | null;
  rpcCode: number | null;
  rpcMessage?: string;
  effect?: CallEffect;
  stderrTail?: string;
  /** How many URLs the server asks the user to open before the request can succeed (-32042). */
  urlsRequired?: number;
}

/**
 * The one public error. Callers match on `code` (and `reason` for detail); every public field is
 * payload-free. The original error is kept as `cause`, in process only: it never reaches
 * `message`, `toJSON()` or the CLI.
 */
export class TetherError extends Error {
  override readonly name = "TetherError";
  readonly code: ErrorCode;
  readonly reason: string;
  readonly stage: Stage;
  readonly phase: Phase;
  readonly limits: Limits | undefined;
  readonly observedBytes: number | undefined;
  readonly httpStatus: number | undefined;
  readonly rpcCode: number | undefined;
  readonly rpcMessage: string | undefined;
  readonly effect: CallEffect | undefined;
  readonly closure: ClosureCategory | undefined;
  readonly cancellation: CancellationSource | undefined;
  readonly security: boolean;
  /**
   * When a stdio server exited or closed its output before establishment completed: the last
   * lines it wrote to its stderr (at most 20 lines and 2 KiB, sanitized for a terminal, every
   * configured secret, URL and credential redacted), joined by `\n`. In the record too.
   */
  readonly stderrTail: string | undefined;
  /**
   * A stdio server that exited with a failure status (or was killed) before it answered anything:
   * it is broken, not speaking another era, so it is not started again to try one.
   */
  readonly failedAtStart: boolean;
  /**
   * A JSON-RPC error -32042 (URLElicitationRequiredError, SEP-1036): the URL-mode elicitations
   * the server requires before the request can succeed, each `{elicitationId, url, message}`
   * (http(s) only, no userinfo, configured secrets redacted, the message scrubbed and truncated;
   * at most 8). In process only: the record carries only their count (`urlsRequired`). The
   * caller may show each URL, open it with the user's consent, wait for
   * `notifications/elicitation/complete` and send the request again; tether never does so itself.
   */
  readonly urlElicitations: readonly UrlElicitationRequired[] | undefined;
  /** Which establishment attempt failed (1-based). */
  attempt: number;
  /** How many establishment attempts were made in all. */
  attempts: number;
  /** Outcomes of the attempts after the one this error reports, in order. */
  laterFailures: TetherError[] = [];
  /** Why establishment stopped trying (with recovery): `not_eligible`, a veto, `max_attempts`, `deadline`. */
  recoveryStopped: string | undefined;
  /** Failures while disposing resources; they never replace this error. */
  cleanupErrors: unknown[] = [];
  /**
   * How many progress notifications the failed operation received before it failed (0: none, or
   * it asked for none). In process only, never in the record: what explains a budget that ran out
   * while progress arrived (the CLI's hint names `--progress-timeout`).
   */
  progressSeen = 0;

  constructor(init: TetherErrorInit) {
    const redactor = init.redactor ?? baseRedactor;
    // Scrubbed and made one clean line here, so no holder of the error can print it raw.
    super(redactor.messageText(init.message), init.cause === undefined ? undefined : { cause: init.cause });
    this.code = init.code;
    this.reason = init.reason;
    this.stage = init.stage;
    this.phase = init.phase;
    this.limits = init.limits ? Object.freeze({ ...init.limits }) : undefined;
    this.observedBytes = init.observedBytes;
    this.httpStatus = init.httpStatus;
    this.rpcCode = init.rpcCode;
    this.rpcMessage = init.rpcMessage === undefined ? undefined : redactor.serverText(init.rpcMessage);
    this.effect = init.effect;
    this.closure = init.closure;
    this.cancellation = init.cancellation;
    this.security = init.security ?? false;
    this.stderrTail = init.stderrTail === undefined ? undefined : rescrubTail(init.stderrTail, redactor);
    this.failedAtStart = init.failedAtStart ?? false;
    this.urlElicitations = init.urlElicitations;
    this.attempt = init.attempt ?? 1;
    this.attempts = init.attempt ?? 1;
  }

  /** The canonical application record: what the CLI prints and what a host may show a model. */
  toJSON(): ErrorRecord {
    const record: ErrorRecord = {
      type: "error",
      code: this.code,
      reason: this.reason,
      stage: this.stage,
      phase: this.phase,
      message: this.message,
      attempt: this.attempt,
      observedBytes: this.observedBytes ?? null,
      httpStatus: this.httpStatus ?? null,
      rpcCode: this.rpcCode ?? null,
    };
    if (this.attempts !== undefined) record.attempts = this.attempts;
    if (this.limits) record.limits = { ...this.limits };
    if (this.rpcMessage !== undefined) record.rpcMessage = this.rpcMessage;
    if (this.effect !== undefined) record.effect = this.effect;
    if (this.stderrTail !== undefined) record.stderrTail = this.stderrTail;
    if (this.urlElicitations !== undefined) record.urlsRequired = this.urlElicitations.length;
    return record;
  }

  /**
   * The record as shown by a holder that may know more secrets than the error's maker did (the
   * CLI knows its environment and the OAuth tokens it stored): `message` and `rpcMessage` are
   * scrubbed once more with that redactor.
   */
  recordFor(redactor: Redactor): ErrorRecord {
    const record = this.toJSON();
    record.message = redactor.messageText(record.message);
    if (record.rpcMessage !== undefined) record.rpcMessage = redactor.serverText(record.rpcMessage);
    if (record.stderrTail !== undefined) {
      const tail = rescrubTail(record.stderrTail, redactor);
      if (tail === undefined) delete record.stderrTail;
      else record.stderrTail = tail;
    }
    return record;
  }

  /**
   * The error as an MCP tool result, for hosts that hand failures to a model: `isError: true`,
   * one text block (the message), and the record as `structuredContent`.
   */
  toToolResult(): {
    isError: true;
    content: [{ type: "text"; text: string }];
    structuredContent: ErrorRecord;
  } {
    const record = this.toJSON();
    const where = `${record.code} (${record.reason}) at ${record.stage}`;
    const advice =
      record.code === "limit"
        ? " Repeating the same request will not help."
        : record.effect === "unknown"
          ? " The tool may or may not have run."
          : "";
    return {
      isError: true,
      content: [{ type: "text", text: `${record.message}: ${where}.${advice}` }],
      structuredContent: record,
    };
  }

  /** Type guard usable across module copies of this class (matches on the brand, not identity). */
  static is(value: unknown): value is TetherError {
    return value instanceof TetherError || (value instanceof Error && value.name === "TetherError");
  }
}

/** Wraps anything that is not already a TetherError as `internal`, keeping it as the in-process cause. */
export function asTetherError(
  error: unknown,
  where: { stage: Stage; phase: Phase; redactor?: Redactor },
): TetherError {
  if (error instanceof TetherError) return error;
  return new TetherError({
    code: "internal",
    reason: "unexpected",
    stage: where.stage,
    phase: where.phase,
    message: "an unexpected internal failure occurred",
    cause: error,
    redactor: where.redactor,
  });
}
