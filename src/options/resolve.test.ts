import assert from "node:assert/strict";
import { test } from "node:test";
import { Redactor } from "../errors/redact.ts";
import { TetherError } from "../errors/tether-error.ts";
import { LIMITS } from "./limits.ts";
import type { ConnectOptions } from "./options.ts";
import { resolveOptions } from "./resolve.ts";

const base = { url: "http://127.0.0.1:1/mcp" };

function configFailure(fn: () => unknown, naming: string): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof TetherError);
    assert.equal(e.code, "config");
    assert.equal(e.stage, "config");
    assert.match(e.message, new RegExp(naming.replace(/\./g, "\\.")));
    return true;
  });
}

test("P2: NaN, Infinity, negatives, zero, fractions and strings are config errors naming the option", () => {
  for (const bad of [Number.NaN, Number.POSITIVE_INFINITY, -1, 0, 1.5, "100", null]) {
    configFailure(() => resolveOptions({ ...base, timeoutMs: bad as number }), "timeoutMs");
    configFailure(() => resolveOptions({ ...base, maxResponseBytes: bad as number }), "maxResponseBytes");
    configFailure(() => resolveOptions({ ...base, call: { timeoutMs: bad as number } }), "call.timeoutMs");
    configFailure(
      () => resolveOptions({ ...base, discovery: { maxResponseBytes: bad as number } }),
      "discovery.maxResponseBytes",
    );
    configFailure(() => resolveOptions({ ...base, maxFrameBytes: bad as number }), "maxFrameBytes");
  }
});

test("P2: a value above the documented maximum is refused; the maximum itself is accepted", () => {
  configFailure(() => resolveOptions({ ...base, timeoutMs: LIMITS.timeoutMs.max + 1 }), "timeoutMs");
  assert.equal(
    resolveOptions({ ...base, timeoutMs: LIMITS.timeoutMs.max }).discovery.timeoutMs,
    LIMITS.timeoutMs.max,
  );
});

test("P2: an absent value means the default, never unlimited", () => {
  const o = resolveOptions(base);
  assert.equal(o.discovery.timeoutMs, LIMITS.timeoutMs.default);
  assert.equal(o.call.maxResponseBytes, LIMITS.maxResponseBytes.default);
  assert.equal(o.maxFrameBytes, LIMITS.maxFrameBytes.default);
});

test("P1: phase overrides apply to their phase only; the baseline applies to both", () => {
  const o = resolveOptions({
    ...base,
    timeoutMs: 5000,
    maxResponseBytes: 1000,
    discovery: { timeoutMs: 100 },
    call: { maxResponseBytes: 50 },
  });
  assert.deepEqual(o.discovery, { timeoutMs: 100, maxResponseBytes: 1000 });
  assert.deepEqual(o.call, { timeoutMs: 5000, maxResponseBytes: 50 });
});

test("N2: a pin and a ceiling together are a config error before any I/O", () => {
  configFailure(
    () => resolveOptions({ ...base, protocolVersion: "2025-06-18", maxProtocolVersion: "2025-11-25" }),
    "cannot be combined",
  );
});

test("N1: an unknown version string is refused, not compared as a string", () => {
  configFailure(() => resolveOptions({ ...base, protocolVersion: "2099-01-01" }), "protocolVersion");
  configFailure(() => resolveOptions({ ...base, maxProtocolVersion: "2025-13-01" }), "maxProtocolVersion");
});

test("X2: URL userinfo and query values, header values and env values become known secrets", () => {
  const o = resolveOptions({
    url: "http://user:pa55word@127.0.0.1/mcp?key=q-s3cret-canary",
    headers: { "x-api-key": "h-s3cret-canary" },
  });
  assert.equal(o.target.kind, "http");
  if (o.target.kind === "http") {
    assert.equal(o.target.url.username, "");
    assert.equal(o.target.url.password, "");
    assert.match(o.target.headers.authorization ?? "", /^Basic /);
  }
  const text = new Redactor(o.secrets).scrub("echo pa55word q-s3cret-canary h-s3cret-canary");
  assert.doesNotMatch(text, /pa55word|q-s3cret-canary|h-s3cret-canary/);
  const s = resolveOptions({ command: "node", env: { TOKEN: "env-s3cret-canary" } });
  assert.doesNotMatch(new Redactor(s.secrets).scrub("got env-s3cret-canary"), /env-s3cret-canary/);
});

test("S4: extra secrets join the connection's secrets; anything but a bounded list of strings is refused", () => {
  const o = resolveOptions({ command: "node", secrets: ["extra-s3cret-canary"] });
  assert.ok(o.secrets.includes("extra-s3cret-canary"));
  for (const secrets of ["one", [1], Array(1_001).fill("x"), ["x".repeat(65 * 1024)]]) {
    assert.throws(
      () => resolveOptions({ command: "node", secrets } as unknown as ConnectOptions),
      (e: unknown) => e instanceof TetherError && e.code === "config" && /secrets/.test(e.message),
    );
  }
});

test("P2: one target, checked by the compiler; a JavaScript caller passing both or neither is refused before any I/O", () => {
  const fetch = () => assert.fail("nothing is fetched");
  const spawn = () => assert.fail("nothing is spawned");
  const deps = { fetch, spawn } as never;
  // @ts-expect-error: a url and a command together do not compile.
  const both: ConnectOptions = { url: "http://127.0.0.1:1/mcp", command: "node", deps };
  configFailure(() => resolveOptions(both), "exactly one");
  // @ts-expect-error: neither does no target at all.
  const neither: ConnectOptions = { timeoutMs: 1_000, deps };
  configFailure(() => resolveOptions(neither), "exactly one");
  // @ts-expect-error: HTTP fields on a stdio target do not compile either.
  const mixed: ConnectOptions = { command: "node", headers: { "x-a": "1" }, deps };
  assert.equal(resolveOptions(mixed).target.kind, "stdio", "at run time they are ignored, as before");
  // The two shapes each resolve to their own target.
  assert.equal(resolveOptions({ url: "http://127.0.0.1:1/mcp", transport: "sse" }).target.kind, "http");
  assert.equal(resolveOptions({ command: "node", args: ["server.mjs"], cwd: "/" }).target.kind, "stdio");
});

test("P2: handlers.elicitationModes declares URL mode mode by mode; anything but form and url is refused", () => {
  const elicitation = () => ({ action: "decline" });
  const caps = (modes?: ("form" | "url")[]) =>
    resolveOptions({ ...base, handlers: { elicitation, elicitationModes: modes } }).capabilities;
  assert.deepEqual(caps(), { elicitation: {} });
  assert.deepEqual(caps(["form"]), { elicitation: {} });
  assert.deepEqual(caps(["form", "url"]), { elicitation: { form: {}, url: {} } });
  assert.deepEqual(caps(["url"]), { elicitation: { url: {} } });
  for (const bad of [[], ["forms"], "url"])
    configFailure(
      () => resolveOptions({ ...base, handlers: { elicitation, elicitationModes: bad as never } }),
      "handlers.elicitationModes",
    );
});
