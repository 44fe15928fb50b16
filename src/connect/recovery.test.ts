import assert from "node:assert/strict";
import { test } from "node:test";
import { networkError } from "../errors/failures.ts";
import { HttpRejection } from "../errors/http-rejection.ts";
import { Interrupt } from "../errors/interrupt.ts";
import { baseRedactor } from "../errors/redact.ts";
import { TetherError } from "../errors/tether-error.ts";
import { classifyForRecovery, isFatal, primaryOf } from "./recovery.ts";

const te = (init: Partial<ConstructorParameters<typeof TetherError>[0]>) =>
  new TetherError({
    code: "connection",
    reason: "closed",
    stage: "initialize",
    phase: "discovery",
    message: "m",
    ...init,
  });

const eof = () => te({ closure: "eof" });
const reset = () => te({ closure: "reset", reason: "reset" });
const handshake = () => te({ code: "timeout", reason: "handshake_timeout" });
const http404 = () => new HttpRejection(404, "text", undefined, undefined, 9);

class AppSecurityError extends Error {}

const ineligible: [string, () => unknown][] = [
  ["401", () => te({ code: "unauthorized", reason: "http_401", httpStatus: 401, security: true })],
  ["403", () => te({ code: "forbidden", reason: "http_403", httpStatus: 403, security: true })],
  ["429", () => te({ code: "throttled", reason: "http_429", httpStatus: 429 })],
  ["raw 401 rejection", () => new HttpRejection(401, "empty", undefined, undefined, 0)],
  ["DNS", () => te({ reason: "dns", security: true })],
  ["raw DNS errno", () => Object.assign(new Error("x"), { code: "ENOTFOUND" })],
  ["TLS", () => te({ reason: "tls", security: true })],
  ["raw TLS errno", () => Object.assign(new Error("x"), { code: "ERR_TLS_CERT_ALTNAME_INVALID" })],
  ["config", () => te({ code: "config", reason: "invalid_limit", stage: "config" })],
  ["caller cancellation", () => te({ code: "cancelled", reason: "cancelled", cancellation: "caller" })],
  ["raw caller interrupt", () => new Interrupt("caller", "cancelled")],
  ["overall deadline", () => te({ code: "timeout", reason: "deadline_exceeded" })],
  ["version mismatch", () => te({ code: "protocol", reason: "version_mismatch" })],
  ["-32020", () => te({ code: "remote_error", reason: "rpc_error", rpcCode: -32020 })],
  ["-32021", () => te({ code: "remote_error", reason: "rpc_error", rpcCode: -32021 })],
  ["internal", () => te({ code: "internal", reason: "unexpected" })],
  ["application security error", () => new AppSecurityError("no")],
];

const isSecurityError = (e: unknown) => e instanceof AppSecurityError;

test("R4: closure, reset, handshake timeout and a 404 rejection are eligible by default", () => {
  for (const e of [eof(), reset(), handshake(), http404(), te({ closure: "process_exit" })]) {
    assert.equal(classifyForRecovery(e, isSecurityError).eligible, true);
  }
  assert.equal(
    classifyForRecovery(te({ code: "protocol", reason: "malformed" })).eligible,
    false,
    "anything else is not",
  );
});

test("R4: every never-eligible failure is ineligible alone", () => {
  for (const [name, make] of ineligible)
    assert.equal(classifyForRecovery(make(), isSecurityError).eligible, false, name);
});

test("R5: one ineligible member anywhere in the cause tree wins, in either order, aggregate or cause chain", () => {
  for (const [name, make] of ineligible) {
    for (const members of [
      [http404(), make()],
      [make(), http404()],
    ]) {
      const aggregate = new AggregateError(members, "both");
      assert.equal(
        classifyForRecovery(aggregate, isSecurityError).eligible,
        false,
        `${name} in an aggregate`,
      );
      const wrapped = te({ closure: "eof", cause: aggregate });
      assert.equal(
        classifyForRecovery(wrapped, isSecurityError).eligible,
        false,
        `${name} under an eligible closure`,
      );
    }
    const chain = te({ closure: "reset", cause: new Error("outer", { cause: make() }) });
    assert.equal(
      classifyForRecovery(chain, isSecurityError).eligible,
      false,
      `${name} deep in a cause chain`,
    );
  }
});

test("R5: decisions never read message text", () => {
  const lookalike = te({ closure: "eof", message: "401 Unauthorized DNS ENOTFOUND cancelled" });
  assert.equal(classifyForRecovery(lookalike).eligible, true);
});

test("C6: the primary error is caller cancellation, then security, then the first failure", () => {
  const first = eof();
  const sec = te({ code: "unauthorized", reason: "http_401", security: true });
  const cancel = te({ code: "cancelled", reason: "cancelled", cancellation: "caller" });
  assert.equal(primaryOf([first, reset()]), first);
  assert.equal(primaryOf([first, sec]), sec);
  assert.equal(primaryOf([first, sec, cancel]), cancel);
});

test("C6: a fatal failure on a later attempt is the primary; the deadline and throttling are not fatal", () => {
  const first = reset();
  const mismatch = te({ code: "protocol", reason: "version_mismatch" });
  const modernRefusal = te({ code: "remote_error", reason: "rpc_error", rpcCode: -32021 });
  const late = te({ code: "timeout", reason: "deadline_exceeded" });
  const throttled = te({ code: "throttled", reason: "http_429", httpStatus: 429 });
  assert.equal(primaryOf([first, mismatch]), mismatch);
  assert.equal(primaryOf([first, modernRefusal]), modernRefusal);
  assert.equal(primaryOf([first, late]), first);
  assert.equal(primaryOf([first, throttled]), first);
  assert.equal(isFatal(te({ code: "config", reason: "invalid_option" })), true);
  assert.equal(isFatal(first), false);
  const own = new AppSecurityError("x");
  const wrapped = te({ reason: "network", cause: own });
  assert.equal(
    isFatal(wrapped, (e) => e instanceof AppSecurityError),
    true,
  );
  assert.equal(
    primaryOf([first, wrapped], (e) => e instanceof AppSecurityError),
    wrapped,
  );
});

test("R4, X4: a TLS failure is labelled tls by the error and by recovery alike, OpenSSL codes included", () => {
  for (const code of [
    "ERR_OSSL_EVP_BAD_DECRYPT",
    "ERR_TLS_CERT_ALTNAME_INVALID",
    "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
    "EPROTO",
  ]) {
    const cause = Object.assign(new Error("x"), { code });
    const e = networkError({ stage: "http_request", phase: "discovery", redactor: baseRedactor }, cause);
    assert.equal(e.reason, "tls", code);
    assert.deepEqual(classifyForRecovery(cause), { eligible: false, why: "tls" }, code);
  }
});
