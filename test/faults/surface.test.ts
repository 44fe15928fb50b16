// Hostile servers against the client surface: results that break their own schemas, malformed
// completions and tasks, tasks that never finish, notification handlers that throw or hang, a
// list that changes under the client, a server request whose handler never settles, and per-call
// options that would switch a bound off. Every server is a stdio script (no SDK) that logs what
// it receives; nothing here sleeps: each test waits for the outcome or an event.

import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import { type Client, type ConnectOptions, connect, TetherError } from "../../src/index.ts";
import { hostileSet, type StdioScript } from "../helpers/hostile.ts";

const TASK_CANCEL_GRACE_MS = 1_000;

/** A legacy (2025-11-25) server: refuses the probe, answers initialize, then `serve(m)` (or -32601). */
function legacy(
  body: string,
  capabilities = "{ tools: { listChanged: true }, completions: {}, tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } }",
): string {
  return `
const reply = (m, result) => send({ jsonrpc: "2.0", id: m.id, result });
const fail = (m, code) => send({ jsonrpc: "2.0", id: m.id, error: { code, message: "no" } });
const serve = (m) => { ${body} };
onMessage((m) => {
  if (m.id === undefined) return serve(m);
  if (m.method === "server/discover") return fail(m, -32601);
  if (m.method === "initialize")
    return reply(m, { protocolVersion: "2025-11-25", capabilities: ${capabilities}, serverInfo: { name: "h", version: "1" } });
  if (m.method === undefined) return serve(m);
  if (serve(m) === undefined) fail(m, -32601);
});
`;
}

/** A modern (2026-07-28) server: answers server/discover, then `serve(m)`. */
function modern(body: string): string {
  return `
const reply = (m, result) => send({ jsonrpc: "2.0", id: m.id, result: { resultType: "complete", ...result } });
const fail = (m, code) => send({ jsonrpc: "2.0", id: m.id, error: { code, message: "no" } });
const serve = (m) => { ${body} };
onMessage((m) => {
  if (m.method === "server/discover")
    return reply(m, { supportedVersions: ["2026-07-28"], capabilities: { tools: {}, extensions: { "io.modelcontextprotocol/tasks": {} } } });
  if (m.id === undefined) return serve(m);
  if (serve(m) === undefined) fail(m, -32601);
});
`;
}

const WEATHER_TOOL = `{ name: "weather", inputSchema: { type: "object" }, outputSchema: { type: "object", properties: { temperature: { type: "number" } }, required: ["temperature"] } }`;

const kept = hostileSet();
after(kept.closeAll);
const { script } = kept;

async function open(s: StdioScript, extra: Partial<ConnectOptions> = {}): Promise<Client> {
  const client = await connect({
    command: s.command,
    args: s.args,
    eraHints: false,
    timeoutMs: 15_000,
    ...extra,
  } as ConnectOptions);
  return kept.client(client);
}

function isError(code: string, reason?: string, effect?: string) {
  return (e: unknown) => {
    assert.ok(e instanceof TetherError, `not a TetherError: ${String(e)}`);
    assert.equal(e.code, code, `${e.code}/${e.reason}: ${e.message}`);
    if (reason !== undefined) assert.equal(e.reason, reason);
    if (effect !== undefined) assert.equal(e.effect, effect);
    return true;
  };
}

/** The methods every process of a script received, in order. */
function methods(s: StdioScript): string[] {
  return s
    .log()
    .flatMap((e) => (e.event === "recv" && typeof e.message?.method === "string" ? [e.message.method] : []));
}

// Every test starts its own server script and client: the groups run side by side.
describe("hostile surfaces", { concurrency: true }, () => {
  describe("output schemas", () => {
    const server = script(
      legacy(`
    if (m.method === "tools/list") return reply(m, { tools: [${WEATHER_TOOL}] });
    if (m.method === "tools/call") {
      const a = m.params.arguments;
      if (a.mode === "wrong") return reply(m, { content: [], structuredContent: { temperature: "hot" } });
      if (a.mode === "missing") return reply(m, { content: [{ type: "text", text: "{}" }] });
      if (a.mode === "error") return reply(m, { content: [], isError: true, structuredContent: { nope: 1 } });
      return reply(m, { content: [], structuredContent: { temperature: 21 } });
    }
  `),
    );

    test("M3: structuredContent that breaks the tool's outputSchema is a protocol error with effect done", async () => {
      const client = await open(server);
      await client.listTools();
      await assert.rejects(
        client.callTool("weather", { mode: "wrong" }),
        isError("protocol", "output_schema_mismatch", "done"),
      );
      await assert.rejects(
        client.callTool("weather", { mode: "missing" }),
        isError("protocol", "output_schema_mismatch", "done"),
      );
      const ok = await client.callTool("weather", { mode: "right" });
      assert.deepEqual(ok.structuredContent, { temperature: 21 });
      const failed = await client.callTool("weather", { mode: "error" });
      assert.equal(failed.isError, true, "a tool that reported an error is not checked");
    });

    test("M3: a mismatch's message holds none of the server's values; the findings stay in its cause", async () => {
      const client = await open(server);
      const error = await client.callTool("weather", { mode: "wrong" }).then(
        () => assert.fail("expected a mismatch"),
        (e: unknown) => e as TetherError,
      );
      assert.equal(error.reason, "output_schema_mismatch");
      assert.ok(!error.message.includes("hot"));
      assert.ok(!JSON.stringify(error.toJSON()).includes("hot"));
      const findings = (error.cause as { errors?: readonly string[] }).errors ?? [];
      assert.ok(findings.some((f) => f.includes("temperature")));
    });

    test("M3: the validator is the caller's to replace or switch off", async () => {
      const seen: unknown[] = [];
      const own = await open(server, {
        validateOutput: (_schema, value) => {
          seen.push(value);
          return { valid: false, errors: ["mine"] };
        },
      });
      await assert.rejects(
        own.callTool("weather", {}),
        isError("protocol", "output_schema_mismatch", "done"),
      );
      assert.deepEqual(seen, [{ temperature: 21 }]);
      const off = await open(server, { validateOutput: false });
      const result = await off.callTool("weather", { mode: "wrong" });
      assert.deepEqual(result.structuredContent, { temperature: "hot" });
      await assert.rejects(
        open(server, { validateOutput: "ajv" as never }),
        isError("config", "invalid_option"),
      );
    });
  });

  describe("notifications", () => {
    const server = script(
      legacy(`
    if (m.method === "tools/list") return reply(m, { tools: [{ name: "noisy", inputSchema: { type: "object" } }] });
    if (m.method === "tools/call") {
      if (m.params.name === "change") send({ jsonrpc: "2.0", method: "notifications/tools/list_changed" });
      else send({ jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: "hello" } });
      return reply(m, { content: [{ type: "text", text: "ok" }] });
    }
  `),
    );

    test("M2: a handler that throws and one that never settles stall neither the session nor the next call", async () => {
      const client = await open(server, { call: { timeoutMs: 5_000 } });
      let calls = 0;
      let reached!: () => void;
      const delivered = new Promise<void>((resolve) => {
        reached = resolve;
      });
      client.onNotification("notifications/message", () => {
        calls++;
        throw new Error("handler bug");
      });
      client.onLogMessage(() => {
        calls++;
        return new Promise<void>(() => {});
      });
      client.onNotification("*", () => {
        calls++;
        reached();
      });
      await client.callTool("noisy");
      await delivered;
      const started = performance.now();
      const next = await client.callTool("noisy");
      assert.equal(next.content[0]?.type, "text");
      assert.ok(performance.now() - started < 4_000, "the next call did not wait on a handler");
      assert.ok(calls >= 3);
    });

    test("M2: notifications/tools/list_changed drops the cached tools before any handler runs", async () => {
      const client = await open(server);
      await client.listTools();
      assert.equal(client.cachedTools?.length, 1);
      let cachedInHandler: unknown = "unset";
      let changed!: () => void;
      const heard = new Promise<void>((resolve) => {
        changed = resolve;
      });
      const off = client.onListChanged("tools", () => {
        cachedInHandler = client.cachedTools;
        changed();
      });
      await client.callTool("change");
      // The notice came before the result on the same stream, so the cache is gone already.
      assert.equal(client.cachedTools, undefined);
      await heard;
      assert.equal(cachedInHandler, undefined);
      off();
      const relisted = await client.listTools();
      assert.equal(relisted.length, 1);
      assert.equal((client as Client).cachedTools, relisted);
    });
  });

  describe("malformed results", () => {
    const server = script(
      legacy(`
    if (m.method === "completion/complete") {
      const v = m.params.argument.value;
      if (v === "many") return reply(m, { completion: { values: Array.from({ length: 101 }, (_, i) => String(i)) } });
      if (v === "numbers") return reply(m, { completion: { values: [1, 2] } });
      return reply(m, { completion: "none" });
    }
    if (m.method === "tools/call") return reply(m, { task: { taskId: 42, status: "sleeping" } });
    if (m.method === "tasks/get") return reply(m, { taskId: m.params.taskId, status: "later" });
    if (m.method === "tasks/list") return reply(m, { tasks: "none" });
  `),
    );

    test("M3, S8: a malformed or oversized completion is a protocol error, not a crash", async () => {
      const client = await open(server);
      for (const value of ["many", "numbers", "shape"]) {
        await assert.rejects(
          client.complete({ type: "ref/prompt", name: "p" }, { name: "a", value }),
          isError("protocol", "malformed_result", "done"),
        );
      }
    });

    test("M3: a malformed task (created, got or listed) is a protocol error", async () => {
      const client = await open(server);
      await assert.rejects(
        client.callTool("slow", {}, { task: { ttlMs: 60_000 } }),
        isError("protocol", "malformed_result", "done"),
      );
      await assert.rejects(client.getTask("t1"), isError("protocol", "malformed_result", "done"));
      await assert.rejects(client.listTasks(), isError("protocol", "malformed_result"));
      const sent = server.log().find((e) => e.message?.method === "tools/call");
      assert.deepEqual(sent?.message?.params?.task, { ttl: 60_000 });
    });
  });

  describe("tasks that never finish", () => {
    const server = script(
      legacy(`
    if (m.method === "tools/call")
      return reply(m, { task: { taskId: "forever", status: "working", ttl: null, pollInterval: 1, createdAt: "2025-11-25T00:00:00Z", lastUpdatedAt: "2025-11-25T00:00:00Z" } });
    if (m.method === "tasks/get")
      return reply(m, { taskId: m.params.taskId, status: "working", ttl: null, pollInterval: 1, createdAt: "x", lastUpdatedAt: "x" });
    if (m.method === "tasks/cancel")
      return reply(m, { taskId: m.params.taskId, status: "cancelled", ttl: null, createdAt: "x", lastUpdatedAt: "x" });
  `),
    );

    test("M1, P4: polling a task that never ends stops at the call budget, and tasks/cancel is sent before it settles", async () => {
      const client = await open(server);
      const budgetMs = 1_500;
      const started = performance.now();
      await assert.rejects(client.callToolAsTask("slow", {}, { timeoutMs: budgetMs }), (e: unknown) => {
        isError("timeout", "deadline_exceeded", "unknown")(e);
        assert.equal((e as TetherError).limits?.timeoutMs, budgetMs);
        return true;
      });
      const elapsed = performance.now() - started;
      assert.ok(elapsed >= budgetMs - 50, `settled early: ${elapsed} ms`);
      assert.ok(elapsed < budgetMs + TASK_CANCEL_GRACE_MS + 5_000, `settled late: ${elapsed} ms`);
      const seen = methods(server);
      assert.ok(seen.includes("tasks/cancel"), "tasks/cancel was sent");
      const polls = seen.filter((m) => m === "tasks/get").length;
      // The server asked for 1 ms; the client's floor is 100 ms: no busy loop.
      assert.ok(polls >= 2 && polls <= Math.ceil(budgetMs / 100) + 1, `${polls} polls`);
    });

    test("M1, P7: a caller's abort while polling is a cancellation, and the task is cancelled on the server", async () => {
      const client = await open(server);
      const controller = new AbortController();
      const reason = new Error("user pressed stop");
      const before = methods(server).filter((m) => m === "tasks/cancel").length;
      const run = client.callToolAsTask(
        "slow",
        {},
        {
          signal: controller.signal,
          onStatus: (t) => {
            if (t.status === "working") controller.abort(reason);
          },
        },
      );
      await assert.rejects(run, (e: unknown) => {
        isError("cancelled", "cancelled")(e);
        assert.equal((e as TetherError).cause, reason);
        return true;
      });
      assert.equal(methods(server).filter((m) => m === "tasks/cancel").length, before + 1);
    });
  });

  describe("server requests", () => {
    const server = script(
      legacy(
        `
    if (m.method === "tools/call") {
      globalThis.pending = m.id;
      return send({ jsonrpc: "2.0", id: "ask-1", method: "elicitation/create", params: { message: "?", requestedSchema: { type: "object", properties: {} } } });
    }
    if (m.id === "ask-1") {
      return send({ jsonrpc: "2.0", id: globalThis.pending, result: { content: [{ type: "text", text: JSON.stringify(m.error ?? m.result) }] } });
    }
  `,
        "{ tools: {} }",
      ),
    );

    test("M4: a handler that never settles is aborted at the call budget and the server is answered with an error", async () => {
      let aborted!: () => void;
      const handlerAborted = new Promise<void>((resolve) => {
        aborted = resolve;
      });
      const client = await open(server, {
        call: { timeoutMs: 800 },
        handlers: {
          elicitation: (_params, { signal }) =>
            new Promise(() => {
              signal.addEventListener("abort", () => aborted(), { once: true });
            }),
        },
      });
      const result = await client.callTool("ask", {}, { timeoutMs: 15_000 });
      await handlerAborted;
      const answer = JSON.parse((result.content[0] as { text: string }).text) as { code?: number };
      assert.equal(answer.code, -32603);
    });
  });

  describe("2026-07-28", () => {
    const server = script(
      modern(`
    if (m.method === "tools/call") {
      globalThis.caps = m.params._meta["io.modelcontextprotocol/clientCapabilities"];
      globalThis.level = m.params._meta["io.modelcontextprotocol/logLevel"];
      return reply(m, { resultType: "task", taskId: "t-1", status: "working", ttlMs: null, pollIntervalMs: 1, createdAt: "x", lastUpdatedAt: "x" });
    }
    if (m.method === "tasks/get") {
      globalThis.gets = (globalThis.gets ?? 0) + 1;
      if (globalThis.gets === 1)
        return reply(m, { taskId: "t-1", status: "input_required", ttlMs: null, createdAt: "x", lastUpdatedAt: "x",
          inputRequests: { who: { method: "elicitation/create", params: { message: "Name?", requestedSchema: { type: "object", properties: {} } } } } });
      if (!globalThis.update)
        return reply(m, { taskId: "t-1", status: "input_required", ttlMs: null, createdAt: "x", lastUpdatedAt: "x",
          inputRequests: { who: { method: "elicitation/create", params: { message: "Name?" } } } });
      return reply(m, { taskId: "t-1", status: "completed", ttlMs: null, createdAt: "x", lastUpdatedAt: "x",
        result: { content: [{ type: "text", text: JSON.stringify({ caps: globalThis.caps, update: globalThis.update, level: globalThis.level }) }] } });
    }
    if (m.method === "tasks/update") {
      globalThis.update = m.params.inputResponses;
      return reply(m, {});
    }
  `),
    );

    test("M1: a 2026-07-28 task declares the extension, answers its input once with tasks/update, and ends with its result", async () => {
      const client = await open(server, {
        handlers: { elicitation: () => ({ action: "accept", content: { name: "Ada" } }) },
      });
      assert.equal(client.era, "modern");
      await client.setLoggingLevel("warning");
      const result = await client.callToolAsTask("job", {});
      const seen = JSON.parse((result.content[0] as { text: string }).text) as Record<string, unknown>;
      assert.deepEqual(seen.caps, { elicitation: {}, extensions: { "io.modelcontextprotocol/tasks": {} } });
      assert.deepEqual(seen.update, { who: { action: "accept", content: { name: "Ada" } } });
      assert.equal(seen.level, "warning");
      assert.equal(
        methods(server).filter((m) => m === "tasks/update").length,
        1,
        "each input request is answered once",
      );
      assert.ok(!methods(server).includes("logging/setLevel"));
    });

    test("M1: methods 2026-07-28 removed are refused unsent; ping is a discovery round trip", async () => {
      const client = await open(server);
      // Subscribing goes through a listen stream there, which this server refuses like any unknown method.
      await assert.rejects(client.subscribeResource("a://b"), isError("remote_error", "rpc_error", "none"));
      await assert.rejects(client.listTasks(), isError("protocol", "not_in_era", "none"));
      await client.ping();
      const seen = methods(server);
      assert.ok(
        !seen.includes("resources/subscribe") && !seen.includes("tasks/list") && !seen.includes("ping"),
      );
    });
  });

  describe("per-call options", () => {
    const server = script(
      legacy(`
    if (m.method === "tools/call") return reply(m, { content: [] });
  `),
    );

    test("P2: per-call timeoutMs and maxResponseBytes are validated like connect options, before anything is sent", async () => {
      const client = await open(server);
      const bad = [Number.NaN, Number.POSITIVE_INFINITY, -1, 0, 1.5, "5"];
      for (const option of ["timeoutMs", "maxResponseBytes"] as const) {
        for (const value of bad) {
          await assert.rejects(client.callTool("x", {}, { [option]: value as number }), (e: unknown) => {
            isError("config", "invalid_limit")(e);
            assert.match((e as TetherError).message, new RegExp(option));
            return true;
          });
          await assert.rejects(
            client.listResourcesPage(undefined, { [option]: value as number }),
            isError("config"),
          );
        }
      }
      await assert.rejects(client.callToolAsTask("x", {}, { ttlMs: -5 }), isError("config", "invalid_limit"));
      assert.ok(!methods(server).includes("tools/call"), "nothing was sent");
      const ok = await client.callTool("x", {}, { timeoutMs: 5_000, maxResponseBytes: 4_096 });
      assert.deepEqual(ok.content, []);
    });
  });
});
