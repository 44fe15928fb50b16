import assert from "node:assert/strict";
import { test } from "node:test";
import { ByteCeilingExceeded } from "./byte-ceiling.ts";
import { classifyFailure, type FailureLabel } from "./classify.ts";
import type { ClosureCategory, ErrorCode } from "./codes.ts";
import { HttpRejection } from "./http-rejection.ts";
import { Interrupt } from "./interrupt.ts";
import { HEADER_MISMATCH, MISSING_CAPABILITY, UNSUPPORTED_VERSION } from "./rpc-codes.ts";
import { RpcReplyError } from "./rpc-reply-error.ts";
import { TetherError } from "./tether-error.ts";
import { toPublicError } from "./to-public.ts";

const supported = { supported: ["2026-07-28"] };
const rpc = (code: number, data?: unknown) => new RpcReplyError({ code, message: "m", data });
const http = (
  status: number,
  kind: HttpRejection["bodyKind"],
  code?: number,
  data?: unknown,
  retryMs?: number,
) =>
  new HttpRejection(status, kind, code === undefined ? undefined : { code, message: "m", data }, retryMs, 10);
const reported = (
  code: ErrorCode,
  reason: string,
  extra: { closure?: ClosureCategory; security?: boolean } = {},
) => new TetherError({ code, reason, stage: "initialize", phase: "discovery", message: "m", ...extra });
const errno = (code: string) => Object.assign(new Error("x"), { code });

/**
 * The classifier's table: one row per kind of failure, and the one label each gets. Columns:
 * code/reason as reported, era sign (N5), recovery verdict and why (R4), whether it disproves a
 * remembered era (N7), and the Retry-After wait worth waiting out (R7).
 */
const TABLE: [string, unknown, string, string, string, boolean, number?][] = [
  // name, failure, "code/reason", "era:evidence", "verdict:why", disprovesHint, retryAfterMs
  [
    "caller cancellation",
    new Interrupt("caller", "cancelled"),
    "cancelled/cancelled",
    "none",
    "veto:cancelled",
    false,
  ],
  [
    "overall deadline",
    new Interrupt("deadline", "deadline_exceeded", 5),
    "timeout/deadline_exceeded",
    "none",
    "veto:deadline",
    false,
  ],
  [
    "silent probe (stage limit)",
    new Interrupt("stage", "probe_timeout", 5),
    "timeout/probe_timeout",
    "legacy:silent",
    "neutral",
    true,
  ],
  [
    "handshake limit",
    new Interrupt("stage", "handshake_timeout", 5),
    "timeout/handshake_timeout",
    "legacy:silent",
    "neutral",
    true,
  ],
  ["-32601 in-band", rpc(-32601), "remote_error/rpc_error", "legacy:rpc_error", "neutral", true],
  [
    "-32022 with supported",
    rpc(UNSUPPORTED_VERSION, supported),
    "remote_error/rpc_error",
    "modern:rpc_-32022",
    "neutral",
    true,
  ],
  [
    "-32022 without supported",
    rpc(UNSUPPORTED_VERSION),
    "remote_error/rpc_error",
    "legacy:rpc_error",
    "neutral",
    true,
  ],
  [
    "-32020 in-band",
    rpc(HEADER_MISMATCH),
    "remote_error/rpc_error",
    "modern:rpc_-32020",
    "veto:rpc_-32020",
    true,
  ],
  [
    "-32021 in-band",
    rpc(MISSING_CAPABILITY),
    "remote_error/rpc_error",
    "modern:rpc_-32021",
    "veto:rpc_-32021",
    true,
  ],
  [
    "HTTP 400 empty",
    http(400, "empty"),
    "protocol/http_400",
    "legacy:http_400_empty",
    "eligible:http_400",
    true,
  ],
  [
    "HTTP 404 text",
    http(404, "text"),
    "protocol/http_404",
    "legacy:http_404_text",
    "eligible:http_404",
    true,
  ],
  [
    "HTTP 405 -32000",
    http(405, "jsonrpc", -32000),
    "remote_error/http_405",
    "legacy:http_405_jsonrpc",
    "eligible:http_405",
    true,
  ],
  [
    "HTTP 400 -32022 with supported",
    http(400, "jsonrpc", UNSUPPORTED_VERSION, supported),
    "remote_error/http_400",
    "modern:http_400_rpc_-32022",
    "neutral",
    true,
  ],
  [
    "HTTP 400 -32020",
    http(400, "jsonrpc", HEADER_MISMATCH),
    "remote_error/http_400",
    "modern:http_400_rpc_-32020",
    "veto:rpc_-32020",
    true,
  ],
  ["HTTP 401", http(401, "jsonrpc", -32600), "unauthorized/http_401", "none", "veto:http_401", false],
  ["HTTP 403", http(403, "empty"), "forbidden/http_403", "none", "veto:http_403", false],
  [
    "HTTP 429 with Retry-After",
    http(429, "empty", undefined, undefined, 1000),
    "throttled/http_429",
    "none",
    "veto:http_429",
    false,
    1000,
  ],
  [
    "HTTP 503 with Retry-After",
    http(503, "text", undefined, undefined, 1000),
    "upstream/http_503",
    "none",
    "neutral",
    false,
    1000,
  ],
  [
    "HTTP 500 with Retry-After",
    http(500, "text", undefined, undefined, 1000),
    "upstream/http_500",
    "none",
    "neutral",
    false,
  ],
  ["HTTP 418", http(418, "text"), "protocol/http_418", "none", "neutral", false],
  ["byte ceiling", new ByteCeilingExceeded(11, 10), "limit/response_too_large", "none", "neutral", false],
  ["raw DNS errno", errno("ENOTFOUND"), "internal/unexpected", "none", "veto:dns", false],
  ["raw TLS errno", errno("ERR_TLS_CERT_ALTNAME_INVALID"), "internal/unexpected", "none", "veto:tls", false],
  ["raw ECONNRESET", errno("ECONNRESET"), "internal/unexpected", "none", "eligible:reset", false],
  ["raw EPIPE", errno("EPIPE"), "internal/unexpected", "none", "eligible:reset", false],
  ["unknown", new Error("boom"), "internal/unexpected", "none", "neutral", false],
  [
    "reported: process exited",
    reported("connection", "closed", { closure: "process_exit" }),
    "connection/closed",
    "legacy:exited",
    "eligible:closed_process_exit",
    true,
  ],
  [
    "reported: stream ended",
    reported("connection", "closed", { closure: "eof" }),
    "connection/closed",
    "legacy:exited",
    "eligible:closed_eof",
    true,
  ],
  [
    "reported: reset",
    reported("connection", "reset", { closure: "reset" }),
    "connection/reset",
    "none",
    "eligible:closed_reset",
    true,
  ],
  ["reported: refused", reported("connection", "refused"), "connection/refused", "none", "neutral", false],
  [
    "reported: DNS",
    reported("connection", "dns", { security: true }),
    "connection/dns",
    "none",
    "veto:dns",
    false,
  ],
  [
    "reported: session expired",
    reported("connection", "session_expired", { closure: "session_expired" }),
    "connection/session_expired",
    "none",
    "eligible:session_expired",
    true,
  ],
  [
    "reported: handshake timeout",
    reported("timeout", "handshake_timeout"),
    "timeout/handshake_timeout",
    "none",
    "eligible:handshake_timeout",
    false,
  ],
  [
    "reported: version mismatch",
    reported("protocol", "version_mismatch"),
    "protocol/version_mismatch",
    "none",
    "veto:version_mismatch",
    false,
  ],
  [
    "reported: config",
    reported("config", "invalid_option"),
    "config/invalid_option",
    "none",
    "veto:config",
    false,
  ],
  ["reported: malformed", reported("protocol", "malformed"), "protocol/malformed", "none", "neutral", false],
];

function row(label: FailureLabel): [string, string, string, boolean, number | undefined] {
  const era = label.era.era === "none" ? "none" : `${label.era.era}:${label.era.evidence}`;
  const recovery =
    label.recovery.verdict === "neutral" ? "neutral" : `${label.recovery.verdict}:${label.recovery.why}`;
  return [`${label.code}/${label.reason}`, era, recovery, label.disprovesHint, label.retryAfterMs];
}

test("N5, R4, R7, X4: the failure classifier, row by row", () => {
  for (const [name, failure, label, era, recovery, disproves, retryAfterMs] of TABLE)
    assert.deepEqual(row(classifyFailure(failure)), [label, era, recovery, disproves, retryAfterMs], name);
});

test("X4: the public error of a failure carries the classifier's label, and a reported one passes as it is", () => {
  const where = { stage: "probe" as const, phase: "discovery" as const };
  for (const [name, failure] of TABLE) {
    const label = classifyFailure(failure);
    const error = toPublicError(failure, where);
    assert.deepEqual(
      [error.code, error.reason, error.httpStatus, error.rpcCode, error.cancellation],
      [label.code, label.reason, label.httpStatus, label.rpcCode, label.cancellation],
      name,
    );
    if (failure instanceof TetherError) assert.equal(error, failure, `${name}: identity kept`);
  }
});

test("N5: legacy evidence from an HTTP status names the status; other legacy evidence does not", () => {
  const refused = classifyFailure(http(404, "text")).era;
  assert.ok(refused.era === "legacy" && refused.httpStatus === 404 && !refused.fresh);
  const answered = classifyFailure(rpc(-32601)).era;
  assert.ok(answered.era === "legacy" && answered.httpStatus === undefined && !answered.fresh);
  const silent = classifyFailure(new Interrupt("stage", "probe_timeout", 5)).era;
  assert.ok(silent.era === "legacy" && silent.fresh, "N6: a silent probe leaves no reusable process");
  const modern = classifyFailure(http(400, "jsonrpc", UNSUPPORTED_VERSION, supported)).era;
  assert.ok(modern.era === "modern" && modern.rpcCode === UNSUPPORTED_VERSION);
  assert.deepEqual(modern.supported, ["2026-07-28"]);
});

test("R5: decisions never read message text", () => {
  const lookalike = new Error("HTTP 401 Unauthorized ENOTFOUND -32020 cancelled");
  assert.deepEqual(row(classifyFailure(lookalike)), [
    "internal/unexpected",
    "none",
    "neutral",
    false,
    undefined,
  ]);
});
