// Ownership (CONTRACT C5, C6, E4): what we own is disposed exactly once, what the caller lends us
// (a fetch, a signal) is only ever used, never closed or aborted, and a disposer that fails never
// replaces the error being reported.
//
// Where a limit is the point (a deadline, the bound on a DELETE that never answers), the client
// runs on a fake clock (`deps.clock`) the test moves once the request reached the server, so the
// limit fires at exactly its value on any machine.

import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { getEventListeners } from "node:events";
import { after, describe, test } from "node:test";
import { type ConnectOptions, connect } from "../../src/index.ts";
import {
  eventually,
  fixtureSet,
  isAlive,
  killQuietly,
  legacyHttp,
  legacyStdio,
  recordingSpawn,
  SESSION_ID,
  SILENT_IGNORES_STDIN_END,
  tetherErrorOf,
  timed,
} from "../helpers/deadline-servers.ts";
import { type FakeClock, fakeClock, until } from "../helpers/fake-clock.ts";

/** close() ends a legacy session with a DELETE bounded at this (on the client's clock). */
const DELETE_LIMIT_MS = 1_000;
/**
 * Real time a test waits for an event (a request arriving, a close() that should have resolved
 * long before), so a hang fails instead of stalling; never a measurement.
 */
const STUCK_MS = 20_000;

const { serve, script, closeAll } = fixtureSet();
const children: number[] = [];
after(async () => {
  await closeAll();
  for (const pid of children) killQuietly(pid);
});

const base = { eraHints: false, timeoutMs: 5_000 } as const satisfies Partial<ConnectOptions>;

/** Moves the fake clock to the pending timer of `ms`, once it is set. */
async function fire(clock: FakeClock, ms: number): Promise<void> {
  await clock.advanceTo(await clock.timer((t) => t.ms === ms, STUCK_MS));
}

function abortListeners(signal: AbortSignal): number {
  return getEventListeners(signal, "abort").length;
}

/** Resolves with how close() ended: resolved (and when), rejected (with what), or still pending. */
async function closeOutcome(
  close: () => Promise<void>,
): Promise<{ outcome: string; ms: number; error?: unknown }> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  const result = await Promise.race([
    close().then(
      () => ({ outcome: "resolved" }),
      (error: unknown) => ({ outcome: "rejected", error }),
    ),
    new Promise<{ outcome: string }>((resolve) => {
      timer = setTimeout(() => resolve({ outcome: "pending" }), STUCK_MS);
    }),
  ]);
  clearTimeout(timer);
  return { ...result, ms: performance.now() - started };
}

/**
 * A caller's fetch, wrapped in a Proxy that records every operation on it other than a call, and
 * every Response it handed out (to check that each body was read or cancelled).
 */
function watchedFetch(inner: typeof fetch = fetch) {
  const touched: string[] = [];
  const calls: { method: string; signal: AbortSignal | undefined }[] = [];
  const responses: Response[] = [];
  const target = async (input: string | URL | Request, init?: RequestInit) => {
    calls.push({ method: init?.method ?? "GET", signal: init?.signal ?? undefined });
    const response = await inner(input, init);
    responses.push(response);
    return response;
  };
  const proxy = new Proxy(target, {
    get(t, key, receiver) {
      touched.push(`get ${String(key)}`);
      return Reflect.get(t, key, receiver);
    },
    set(t, key, value, receiver) {
      touched.push(`set ${String(key)}`);
      return Reflect.set(t, key, value, receiver);
    },
    has(t, key) {
      touched.push(`has ${String(key)}`);
      return Reflect.has(t, key);
    },
    defineProperty(t, key, d) {
      touched.push(`define ${String(key)}`);
      return Reflect.defineProperty(t, key, d);
    },
    deleteProperty(t, key) {
      touched.push(`delete ${String(key)}`);
      return Reflect.deleteProperty(t, key);
    },
  }) as typeof fetch;
  return { fetch: proxy, touched, calls, responses };
}

describe("C5: what the caller lends us is only used", () => {
  test("C5: a caller's fetch is only ever invoked, and the caller's signals are never aborted nor left hooked", async () => {
    const server = await serve(legacyHttp());
    const watched = watchedFetch();
    const connectAbort = new AbortController();
    const callAbort = new AbortController();
    const client = await connect({
      ...base,
      url: server.url,
      signal: connectAbort.signal,
      deps: { fetch: watched.fetch },
    });
    assert.equal(
      abortListeners(connectAbort.signal),
      0,
      "no listener left on the connect signal after connect()",
    );
    const result = await client.callTool("echo", { text: "hi" }, { signal: callAbort.signal });
    assert.deepEqual(result.content, [{ type: "text", text: "hi" }]);
    assert.equal(abortListeners(callAbort.signal), 0, "no listener left on the call's signal after the call");
    await client.close();
    assert.ok(watched.calls.length >= 3, `fetch was used (${watched.calls.length} calls)`);
    assert.deepEqual(watched.touched, [], "nothing but calls was done to the caller's fetch");
    assert.equal(connectAbort.signal.aborted, false, "the caller's connect signal was not aborted");
    assert.equal(callAbort.signal.aborted, false, "the caller's call signal was not aborted");
    for (const c of watched.calls)
      assert.notEqual(c.signal, connectAbort.signal, "our own signal goes to fetch");
    assert.equal(abortListeners(connectAbort.signal), 0);
  });

  test("C5: a failed connect (deadline) leaves the caller's signal and fetch untouched", async () => {
    const server = await serve(legacyHttp({ discover: "hang", initialize: "hang" }));
    const watched = watchedFetch();
    const controller = new AbortController();
    const clock = fakeClock();
    const connecting = timed(() =>
      connect({
        ...base,
        url: server.url,
        timeoutMs: 300,
        signal: controller.signal,
        deps: { fetch: watched.fetch, clock },
      }),
    );
    await until(() => server.requests.length === 1, STUCK_MS, "the first request arrived");
    await fire(clock, 300);
    const run = await connecting;
    assert.equal(tetherErrorOf(run).code, "timeout");
    assert.equal(controller.signal.aborted, false, "the caller's signal was not aborted by our deadline");
    assert.equal(abortListeners(controller.signal), 0, "no listener left on the caller's signal");
    assert.deepEqual(watched.touched, []);
    assert.ok(
      watched.calls.every((c) => c.signal?.aborted),
      "every request we made was aborted (ours to abort)",
    );
  });

  test("C5: every response body we were handed is read or cancelled by the time close() resolves", async () => {
    const server = await serve(legacyHttp());
    const watched = watchedFetch();
    const client = await connect({ ...base, url: server.url, deps: { fetch: watched.fetch } });
    await client.listTools();
    await client.callTool("echo", { text: "x" });
    await client.close();
    assert.ok(watched.responses.length >= 4, `responses seen: ${watched.responses.length}`);
    for (const r of watched.responses) {
      assert.ok(
        r.body === null || r.bodyUsed,
        `a ${r.status} response's body was neither read nor cancelled`,
      );
    }
  });
});

describe("C5: each resource is disposed exactly once", () => {
  test("C5: one DELETE per legacy session, however often close() is called", async () => {
    const server = await serve(legacyHttp());
    const client = await connect({ ...base, url: server.url });
    const first = client.close();
    assert.equal(client.close(), first, "every call gets the same promise");
    await Promise.all([first, client.close(), client.close()]);
    await client.close();
    // Every close() has resolved, and each waits for the DELETE it would send: all have arrived.
    const deletes = server.requests.filter((r) => r.method === "DELETE");
    assert.equal(deletes.length, 1, "exactly one DELETE");
    assert.equal(deletes[0]!.headers["mcp-session-id"], SESSION_ID);
    assert.equal(client.state, "closed");
  });

  test("C5: a stdio server gets one process per attempt, and it has exited once close() resolves", async () => {
    const s = script(legacyStdio());
    const client = await connect({ ...base, command: s.command, args: s.args });
    const pids = s.pids();
    assert.equal(pids.length, 1, "one process: the refused probe leaves the channel usable");
    assert.equal(isAlive(pids[0]!), true);
    await Promise.all([client.close(), client.close()]);
    assert.equal(isAlive(pids[0]!), false, "the process has exited");
    await client.close();
    assert.equal(s.pids().length, 1, "no process was started by close()");
  });

  test("C5: after a silent probe, the probed process is gone once connect() returns, the fresh one once close() resolves", async () => {
    const s = script(legacyStdio({ probe: "silent" }));
    const spawned = recordingSpawn();
    const client = await connect({
      ...base,
      command: s.command,
      args: s.args,
      probeTimeoutMs: 200,
      deps: { spawn: spawned.spawn },
    });
    const pids = spawned.pids;
    assert.equal(pids.length, 2, "a fresh process for initialize");
    assert.equal(isAlive(pids[0]!), false, "the probed process was stopped before connect() returned");
    assert.equal(isAlive(pids[1]!), true, "the fresh process serves the client");
    await client.close();
    assert.equal(isAlive(pids[1]!), false, "the fresh process has exited");
  });
});

describe("C5/E4: close() against a misbehaving DELETE", () => {
  test("C5: close() resolves at once and never rejects when DELETE answers 500", async () => {
    const server = await serve(legacyHttp({ delete: "http-500" }));
    const clock = fakeClock();
    const client = await connect({ ...base, url: server.url, deps: { clock } });
    const closed = await closeOutcome(() => client.close());
    assert.equal(closed.outcome, "resolved", String(closed.error ?? ""));
    assert.deepEqual(clock.fired(), [], "at once: no limit was waited out");
    assert.equal(server.count("DELETE"), 1);
  });

  test("C5: close() resolves when its DELETE limit ends, and never rejects, when DELETE never answers", async () => {
    const server = await serve(legacyHttp({ delete: "hang" }));
    const clock = fakeClock();
    const client = await connect({ ...base, url: server.url, deps: { clock } });
    const closing = closeOutcome(() => client.close());
    await until(() => server.count("DELETE") === 1, STUCK_MS, "the DELETE arrived");
    await fire(clock, DELETE_LIMIT_MS);
    const closed = await closing;
    assert.equal(closed.outcome, "resolved", String(closed.error ?? ""));
    assert.equal(clock.now(), DELETE_LIMIT_MS, "close() waited for the DELETE until its limit, no longer");
    assert.equal(server.count("DELETE"), 1);
  });

  test("E4: close() resolves when its DELETE limit ends when the caller's fetch hangs on DELETE and ignores its signal", async () => {
    const server = await serve(legacyHttp());
    let deletes = 0;
    const stubborn = ((input: string | URL | Request, init?: RequestInit) => {
      if (init?.method === "DELETE") {
        deletes++;
        return new Promise<Response>(() => {});
      }
      return fetch(input, init);
    }) as typeof fetch;
    const clock = fakeClock();
    const client = await connect({ ...base, url: server.url, deps: { fetch: stubborn, clock } });
    const closing = closeOutcome(() => client.close());
    await until(() => deletes === 1, STUCK_MS, "the DELETE was handed to the caller's fetch");
    await fire(clock, DELETE_LIMIT_MS);
    const closed = await closing;
    assert.equal(closed.outcome, "resolved", "close() is not held by a fetch that ignores cancellation");
    assert.equal(clock.now(), DELETE_LIMIT_MS, "close() gave up on the DELETE at its limit");
  });
});

describe("C6: a failing disposer never replaces the primary error", () => {
  test("C6: a child whose kill() throws: the deadline is reported, the kill failure is in cleanupErrors", async () => {
    const s = script(SILENT_IGNORES_STDIN_END);
    const killFailure = new Error("kill refused by the test's spawn seam");
    let child: ChildProcess | undefined;
    const spawnWithBrokenKill = ((...args: Parameters<typeof spawn>) => {
      // Not a process group leader (no `detached`), so shutdown signals go through this kill().
      child = spawn(args[0] as string, args[1] as string[], { ...(args[2] as object), detached: false });
      if (child.pid !== undefined) children.push(child.pid);
      child.kill = () => {
        throw killFailure;
      };
      return child;
    }) as typeof spawn;
    const clock = fakeClock();
    const connecting = timed(() =>
      connect({
        ...base,
        command: s.command,
        args: s.args,
        timeoutMs: 400,
        deps: { spawn: spawnWithBrokenKill, clock },
      }),
    );
    await until(
      () => s.pids().length === 1 && s.received(s.pids()[0]!).includes("server/discover"),
      STUCK_MS,
      "the probe reached the process",
    );
    await fire(clock, 400);
    const run = await connecting;
    const e = tetherErrorOf(run);
    assert.equal(e.code, "timeout", `the primary error stands (got ${e.code}/${e.reason})`);
    assert.equal(e.reason, "deadline_exceeded");
    assert.ok(child, "our spawn seam was used");
    assert.ok(
      e.cleanupErrors.some((c) => c === killFailure || (c instanceof Error && c.cause === killFailure)),
      `the kill failure is attached to cleanupErrors (got ${e.cleanupErrors.length} entries)`,
    );
  });

  test("C6: a fetch that throws on DELETE: the version mismatch is reported, the DELETE failure is in cleanupErrors", async () => {
    // The server answers initialize (opening a session) with a version the pin refuses, so the
    // attempt fails after a session exists and disposal must end it.
    const server = await serve(legacyHttp({ version: "2025-06-18" }));
    const deleteFailure = new TypeError("fetch failed on DELETE (test seam)");
    const throwingDelete = ((input: string | URL | Request, init?: RequestInit) => {
      if (init?.method === "DELETE") return Promise.reject(deleteFailure);
      return fetch(input, init);
    }) as typeof fetch;
    const run = await timed(() =>
      connect({ ...base, url: server.url, protocolVersion: "2025-11-25", deps: { fetch: throwingDelete } }),
    );
    const e = tetherErrorOf(run);
    assert.equal(e.code, "protocol", `the primary error stands (got ${e.code}/${e.reason})`);
    assert.equal(e.reason, "version_mismatch");
    assert.equal(e.stage, "initialize");
    assert.ok(
      e.cleanupErrors.some((c) => c === deleteFailure || (c instanceof Error && c.cause === deleteFailure)),
      `the DELETE failure is attached to cleanupErrors (got ${e.cleanupErrors.length} entries)`,
    );
  });

  test("C6: a DELETE that fails does not replace a version mismatch (and close of the failed attempt settles)", async () => {
    const server = await serve(legacyHttp({ version: "2025-06-18", delete: "http-500" }));
    const clock = fakeClock();
    const run = await timed(() =>
      connect({ ...base, url: server.url, protocolVersion: "2025-11-25", deps: { clock } }),
    );
    const e = tetherErrorOf(run);
    assert.equal(e.code, "protocol");
    assert.equal(e.reason, "version_mismatch");
    assert.ok(
      await eventually(() => server.count("DELETE") === 1, STUCK_MS),
      "the session we opened was ended",
    );
    assert.deepEqual(clock.fired(), [], "it settled at once: no limit was waited out");
  });
});
