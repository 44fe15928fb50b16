// The whole client surface against a server this project did not write: the reference
// `@modelcontextprotocol/server-everything`, on stdio and on Streamable HTTP. Every event is
// waited for (a promise the handler resolves), never slept for; budgets are generous.

import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { createServer } from "node:net";
import { after, before, describe, test } from "node:test";
import {
  type Client,
  type ConnectOptions,
  connect,
  type LoggingMessage,
  type Task,
  TetherError,
} from "../../src/index.ts";
import { serverPath } from "../helpers/fleet.ts";

const BUDGET_MS = 30_000;
const EVENT_MS = 20_000;

const everything = serverPath("everything.mjs");

/** A promise that `resolve` settles, failing after EVENT_MS with what was awaited. */
function event<T>(what: string): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  let timer: NodeJS.Timeout | undefined;
  const promise = new Promise<T>((res, rej) => {
    timer = setTimeout(() => rej(new Error(`no ${what} within ${EVENT_MS} ms`)), EVENT_MS);
    resolve = (value) => {
      clearTimeout(timer);
      res(value);
    };
  });
  return { promise, resolve };
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Starts server-everything's Streamable HTTP mode and resolves once it says it listens. */
async function startHttp(): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const child = spawn(process.execPath, [everything, "streamableHttp"], {
    env: { ...process.env, PORT: String(port) },
    stdio: ["ignore", "ignore", "pipe"],
  });
  await new Promise<void>((resolve, reject) => {
    let tail = "";
    const timer = setTimeout(() => reject(new Error(`server-everything did not listen: ${tail}`)), EVENT_MS);
    child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
      tail = (tail + chunk).slice(-2000);
      if (tail.includes("listening on port")) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`server-everything exited (${code}): ${tail}`));
    });
  });
  child.stderr?.resume();
  return { url: `http://127.0.0.1:${port}/mcp`, child };
}

interface Target {
  label: string;
  options: () => ConnectOptions;
}

let http: { url: string; child: ChildProcess } | undefined;

const TARGETS: Target[] = [
  {
    label: "stdio",
    options: () => ({ command: process.execPath, args: [everything, "stdio"] }),
  },
  {
    label: "Streamable HTTP",
    options: () => {
      if (!http) throw new Error("the HTTP server was not started");
      return { url: http.url };
    },
  },
];

before(async () => {
  http = await startHttp();
});

after(async () => {
  if (http && http.child.exitCode === null) {
    const exited = new Promise((resolve) => http?.child.once("exit", resolve));
    http.child.kill("SIGKILL");
    await exited;
  }
});

// Every test has its own client (its own process over stdio, its own session over HTTP), so the
// tests of both targets run side by side.
describe("server-everything", { concurrency: true }, () => {
  for (const target of TARGETS) {
    describe(`server-everything over ${target.label}`, { concurrency: true }, () => {
      async function withClient(fn: (client: Client) => Promise<void>): Promise<void> {
        const client = await connect({ ...target.options(), eraHints: false, timeoutMs: BUDGET_MS });
        try {
          await fn(client);
        } finally {
          await client.close();
        }
      }

      test("M1: ping, generic request and per-page listing go through the one request path", async () => {
        await withClient(async (client) => {
          await client.ping();
          const all = await client.listTools();
          const page = await client.listToolsPage();
          assert.deepEqual(page.items.map((t) => t.name).sort(), all.map((t) => t.name).sort());
          assert.equal(page.nextCursor, undefined);
          const prompts = await client.request("prompts/list", {});
          assert.ok(Array.isArray(prompts.prompts));
          const templates = await client.listResourceTemplatesPage();
          assert.ok(templates.items.some((t) => t.uriTemplate.includes("{resourceId}")));
          await assert.rejects(
            client.request("skills/list"),
            (e: unknown) => e instanceof TetherError && e.code === "remote_error" && e.effect === "none",
          );
        });
      });

      test("M1, M3: completions for a prompt argument (with context) and a resource template variable", async () => {
        await withClient(async (client) => {
          const departments = await client.complete(
            { type: "ref/prompt", name: "completable-prompt" },
            { name: "department", value: "E" },
          );
          assert.deepEqual(departments.completion.values, ["Engineering"]);
          const names = await client.complete(
            { type: "ref/prompt", name: "completable-prompt" },
            { name: "name", value: "" },
            { arguments: { department: "Sales" } },
          );
          assert.deepEqual(names.completion.values, ["David", "Eve", "Frank"]);
          const ids = await client.complete(
            { type: "ref/resource", uri: "demo://resource/dynamic/text/{resourceId}" },
            { name: "resourceId", value: "7" },
          );
          assert.deepEqual(ids.completion.values, ["7"]);
          const prompt = await client.getPrompt("args-prompt", { city: "Paris" });
          assert.equal(prompt.messages[0]?.role, "user");
        });
      });

      test("M2: after setLoggingLevel, log messages arrive through onLogMessage and onNotification", async () => {
        await withClient(async (client) => {
          const typed = event<LoggingMessage>("log message");
          const raw = event<string>("notifications/message");
          client.onLogMessage((m) => typed.resolve(m));
          const off = client.onNotification("notifications/message", (n) => raw.resolve(n.method));
          await client.setLoggingLevel("debug");
          await client.callTool("toggle-simulated-logging");
          const message = await typed.promise;
          assert.ok(
            ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"].includes(
              message.level,
            ),
          );
          assert.equal(await raw.promise, "notifications/message");
          off();
          await client.callTool("toggle-simulated-logging");
        });
      });

      test("M2: a subscribed resource's update arrives through onResourceUpdated", async () => {
        await withClient(async (client) => {
          const uri = "demo://resource/dynamic/text/1";
          const updated = event<string>("resource update");
          client.onResourceUpdated((u) => {
            if (u.uri === uri) updated.resolve(u.uri);
          });
          await client.subscribeResource(uri);
          await client.callTool("toggle-subscriber-updates");
          assert.equal(await updated.promise, uri);
          await client.unsubscribeResource(uri);
          await client.callTool("toggle-subscriber-updates");
          const read = await client.readResource(uri);
          assert.equal(read.contents[0]?.uri, uri);
        });
      });

      test("M2: the long-running operation's progress reaches the call's onProgress", async () => {
        await withClient(async (client) => {
          const seen: number[] = [];
          const result = await client.callTool(
            "trigger-long-running-operation",
            { duration: 1, steps: 2 },
            { onProgress: (p) => seen.push(p.progress) },
          );
          assert.deepEqual(seen, [1, 2]);
          assert.equal(result.content[0]?.type, "text");
        });
      });

      test("M1: the research tool runs as a task to completion, polled at the server's interval", async () => {
        await withClient(async (client) => {
          await client.listTools();
          // The same tool by hand, alongside: a CreateTaskResult, then the task's state and result.
          const created = await client.callTool("simulate-research-query", { topic: "reefs" }, { task: {} });
          assert.ok("task" in created, "a task was created");
          const byHand = (async () => {
            const task = await client.getTask(created.task.taskId);
            assert.equal(task.taskId, created.task.taskId);
            const listed = await client.listTasks();
            assert.ok(listed.some((t) => t.taskId === task.taskId));
            const done = await client.getTaskResult(task.taskId);
            assert.ok(done.content.length > 0);
          })();
          const statuses: Task[] = [];
          const result = await client.callToolAsTask(
            "simulate-research-query",
            { topic: "tides" },
            { onStatus: (t) => statuses.push(t), timeoutMs: BUDGET_MS },
          );
          const first = result.content[0];
          assert.ok(first?.type === "text" && first.text.includes("Research Report"));
          assert.equal(statuses[0]?.status, "working");
          assert.equal(statuses[0]?.pollIntervalMs, 1000);
          assert.ok(statuses.length >= 2, "polled at least once");
          await byHand;
        });
      });

      test("M3: structured content is checked against the tool's output schema, fetched once when unknown", async () => {
        await withClient(async (client) => {
          const cached = () => client.cachedTools;
          assert.equal(cached(), undefined);
          const result = await client.callTool("get-structured-content", { location: "Chicago" });
          assert.deepEqual(result.structuredContent, {
            temperature: 36,
            conditions: "Light rain / drizzle",
            humidity: 82,
          });
          const tool = cached()?.find((t) => t.name === "get-structured-content");
          assert.ok(tool?.outputSchema, "the tools were listed once to find the schema");
        });
      });
    });
  }
});
