// What a bridged call owes the host besides its result: progress that keeps a long call alive
// (each notification restarts the call clock, ten times the budget still bounds the whole call,
// a silent call ends at its budget), and, in front of a 2026-07-28 HTTP server, the
// `Mcp-Param-*` headers a direct call carries. Contract IDs: P4 (each response bounded by its
// phase's budget), M2 (progress reaches the caller), N8 (modern requests carry the headers the
// spec requires).
//
// The clock decisions run on a fake clock, in process, in front of a stdio server whose progress
// the test drives; the wiring runs through the built CLI in front of a server built on the
// official SDK.

import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { BridgeSession } from "../../src/bridge/bridge-session.ts";
import { Redactor } from "../../src/errors/redact.ts";
import { connect } from "../../src/index.ts";
import type { JsonRpcMessage } from "../../src/jsonrpc/messages.ts";
import { RawHost } from "../helpers/bridge.ts";
import { fakeClock } from "../helpers/fake-clock.ts";

const PROGRESS_SERVER = fileURLToPath(new URL("../fixtures/bridge/progress-server.mjs", import.meta.url));
const HEADERS_SERVER = fileURLToPath(
  new URL("../fixtures/bridge/modern-headers-server.mjs", import.meta.url),
);

type Message = Record<string, unknown> & { id?: string | number; method?: string };

const textOf = (m: Message) =>
  ((m.result as { content: { text?: string }[] } | undefined)?.content[0]?.text ?? "") as string;
const errorData = (m: Message) =>
  ((m.error as { data?: Record<string, unknown> } | undefined)?.data ?? {}) as Record<string, unknown>;

/** A host on an in-process bridge session: what it was sent, and waits for a message. */
function inProcessHost(clock: ReturnType<typeof fakeClock>, callTimeoutMs: number) {
  const received: Message[] = [];
  const waiters: { match: (m: Message) => boolean; resolve: (m: Message) => void }[] = [];
  const session = new BridgeSession({
    connect: {
      command: process.execPath,
      args: [PROGRESS_SERVER],
      call: { timeoutMs: callTimeoutMs },
      deps: { clock },
    },
    redactor: new Redactor([]),
    bridgeInfo: { name: "bridge-test", version: "0" },
    link: {
      send(message: JsonRpcMessage) {
        const m = message as unknown as Message;
        received.push(m);
        for (const w of [...waiters])
          if (w.match(m)) {
            waiters.splice(waiters.indexOf(w), 1);
            w.resolve(m);
          }
      },
    },
  });
  const next = (match: (m: Message) => boolean): Promise<Message> => {
    const found = received.find(match);
    return found ? Promise.resolve(found) : new Promise((resolve) => waiters.push({ match, resolve }));
  };
  const send = (m: Message) => session.receive({ jsonrpc: "2.0", ...m } as JsonRpcMessage);
  const request = (id: string, method: string, params: Record<string, unknown> = {}) => {
    send({ id, method, params });
    return next((m) => m.id === id && m.method === undefined);
  };
  const progressOf = (token: string) =>
    received.filter(
      (m) =>
        m.method === "notifications/progress" &&
        (m.params as { progressToken?: unknown }).progressToken === token,
    );
  return {
    session,
    received,
    next,
    send,
    request,
    progressOf,
    async initialize() {
      const reply = await request("init", "initialize", {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "host", version: "1" },
      });
      assert.ok(reply.result, "initialize answered");
      send({ method: "notifications/initialized" });
    },
  };
}

test("bridge P4 M2: progress restarts a bridged call's clock, and ten times the budget still ends it (fake clock)", async () => {
  const clock = fakeClock();
  const host = inProcessHost(clock, 1000);
  try {
    await host.initialize();
    host.send({ id: "long", method: "tools/call", params: { name: "hold", _meta: { progressToken: "p" } } });
    let ticks = 0;
    const tick = async () => {
      ticks++;
      const reply = await host.request(`tick-${ticks}`, "tools/call", { name: "tick" });
      assert.equal(textOf(reply), "held 1", "the long call is still held by the server");
      // The progress crossed the bridge under the host's own token, so its clock was restarted.
      await host.next(() => host.progressOf("p").length === ticks);
    };
    await tick();
    // Each step is 900 ms of a 1000 ms budget: without the restarts the call would end in the second.
    while (clock.now() + 900 < 10_000) {
      await clock.advance(900);
      await tick();
    }
    assert.equal(
      host.received.some((m) => m.id === "long"),
      false,
      `still running at ${clock.now()} ms`,
    );
    const progress = host.progressOf("p").map((m) => m.params as Record<string, unknown>);
    assert.deepEqual(
      progress.map((p) => p.progress),
      progress.map((_, i) => i + 1),
      "every progress notification, in order",
    );
    assert.equal(progress[0]!.message, "tick 1");
    // The whole call is bounded all the same: ten times the budget.
    await clock.advance(10_000 - clock.now());
    const ended = await host.next((m) => m.id === "long");
    assert.equal(errorData(ended).code, "timeout");
    assert.equal(errorData(ended).reason, "max_total_timeout");
  } finally {
    await host.session.close();
  }
});

test("bridge P4: a call that reports nothing ends at its budget even though the host asked for progress (fake clock)", async () => {
  const clock = fakeClock();
  const host = inProcessHost(clock, 1000);
  try {
    await host.initialize();
    host.send({ id: "long", method: "tools/call", params: { name: "hold", _meta: { progressToken: "p" } } });
    // The call's clock is running once its budget's timer is set.
    await clock.timer((t) => t.ms === 1000);
    await clock.advance(999);
    // A request that goes to the server and back comes after anything the advance set off.
    const listed = await host.request("list", "tools/list");
    assert.ok(listed.result);
    assert.equal(
      host.received.some((m) => m.id === "long"),
      false,
      "not before its budget",
    );
    await clock.advance(1);
    const ended = await host.next((m) => m.id === "long");
    assert.equal(errorData(ended).code, "timeout");
    assert.equal(errorData(ended).reason, "deadline_exceeded");
    assert.equal(host.progressOf("p").length, 0);
  } finally {
    await host.session.close();
  }
});

/** The fixture on 127.0.0.1: its URL once it printed its ready line; it exits when its stdin ends. */
async function headersServer(): Promise<{ url: string; child: ChildProcess; stop(): Promise<void> }> {
  const child = spawn(process.execPath, [HEADERS_SERVER, "--exit-with-stdin"], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  const exited = once(child, "exit");
  let out = "";
  child.stdout!.setEncoding("utf8");
  for await (const chunk of child.stdout!) {
    out += chunk;
    if (out.includes("\n")) break;
  }
  const { url } = JSON.parse(out.slice(0, out.indexOf("\n"))) as { url: string };
  return {
    url,
    child,
    async stop() {
      child.stdin!.end();
      await exited;
    },
  };
}

test("bridge P4 M2: through the CLI, a call that keeps reporting progress outlives its budget; a silent one ends at it", async () => {
  const server = await headersServer();
  const host = new RawHost(["--call-timeout", "1500", server.url]);
  try {
    await host.initialize();
    // Twelve notifications 300 ms apart: 3.6 s in all, more than twice the 1.5 s budget.
    const started = performance.now();
    const done = await host.request("ticks", "tools/call", {
      name: "ticks",
      arguments: { count: 12, every: 300 },
      _meta: { progressToken: "t" },
    });
    const took = performance.now() - started;
    assert.equal(textOf(done), "ticked 12", JSON.stringify(done.error ?? {}));
    assert.ok(took > 1500, `the call outlived its budget (${Math.round(took)} ms)`);
    const progress = host.received.filter((m) => m.method === "notifications/progress");
    assert.deepEqual(
      progress.map((m) => (m.params as { progressToken: unknown; progress: number }).progressToken),
      Array(12).fill("t"),
    );
    assert.deepEqual(
      progress.map((m) => (m.params as { progress: number }).progress),
      [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12],
    );
    const silentStart = performance.now();
    const silent = await host.request("silent", "tools/call", {
      name: "silent",
      arguments: {},
      _meta: { progressToken: "s" },
    });
    const silentTook = performance.now() - silentStart;
    assert.equal(errorData(silent).code, "timeout");
    assert.equal(errorData(silent).reason, "deadline_exceeded");
    assert.ok(silentTook >= 1400, `not before its budget (${Math.round(silentTook)} ms)`);
  } finally {
    await host.end();
    await server.stop();
  }
});

test("bridge N8: a tool the server added after the bridge listed its tools still gets its Mcp-Param-* headers", async () => {
  const server = await headersServer();
  const host = new RawHost([server.url]);
  try {
    await host.initialize();
    // The first call makes the bridge list the tools; `late` is not among them yet.
    const first = await host.request("unlock", "tools/call", { name: "unlock", arguments: {} });
    assert.equal(textOf(first), "unlocked", JSON.stringify(first.error ?? {}));
    const late = await host.request("late", "tools/call", { name: "late", arguments: { zone: "eu" } });
    assert.equal(late.error, undefined, JSON.stringify(late.error ?? {}));
    const seen = JSON.parse(textOf(late)) as Record<string, string>;
    assert.equal(seen["mcp-name"], "late");
    assert.equal(seen["mcp-param-zone"], "eu");
    // A name the current listing lacks lists once, not on every call. One listing before the
    // first call, one for `late`, one for `nope`; the second `nope` and `listings` add none.
    for (const id of ["nope-1", "nope-2"]) {
      const nope = await host.request(id, "tools/call", { name: "nope", arguments: {} });
      assert.ok(nope.error !== undefined || (nope.result as { isError?: boolean }).isError === true, id);
    }
    const count = await host.request("listings", "tools/call", { name: "listings", arguments: {} });
    assert.equal(textOf(count), "3");
  } finally {
    await host.end();
    await server.stop();
  }
});

test("bridge N8: a bridged tools/call carries the Mcp-Param-* headers a direct call carries, to a 2026-07-28 HTTP server", async () => {
  const server = await headersServer();
  const args = { region: "zürich-1", priority: 3, note: "not a header" };
  const host = new RawHost([server.url]);
  try {
    await host.initialize();
    // No tools/list from the host first: the bridge lists for the client's catalog itself.
    const bridged = await host.request("route", "tools/call", { name: "route", arguments: args });
    assert.equal(bridged.error, undefined, JSON.stringify(bridged.error ?? {}));
    const seen = JSON.parse(textOf(bridged)) as Record<string, string>;
    assert.equal(seen["mcp-method"], "tools/call");
    assert.equal(seen["mcp-name"], "route");
    assert.equal(seen["mcp-param-region"], `=?base64?${Buffer.from("zürich-1").toString("base64")}?=`);
    assert.equal(seen["mcp-param-priority"], "3");
    assert.equal(seen["mcp-param-note"], undefined, "only the marked arguments");
    // The same call made directly, after a listing, reaches the server with the same headers.
    const client = await connect({ url: server.url });
    try {
      await client.listTools();
      const direct = await client.callTool("route", args);
      const directSeen = JSON.parse((direct.content[0] as { text: string }).text) as Record<string, string>;
      const params = (h: Record<string, string>) =>
        Object.fromEntries(Object.entries(h).filter(([k]) => k.startsWith("mcp-param-") || k === "mcp-name"));
      assert.deepEqual(params(seen), params(directSeen));
    } finally {
      await client.close();
    }
  } finally {
    await host.end();
    await server.stop();
  }
});
