import assert from "node:assert/strict";
import { test } from "node:test";
import {
  admitPrompt,
  admitResource,
  admitTemplate,
  completeResult,
  createTaskResult,
  loggingMessage,
  MAX_COMPLETION_VALUES,
  MAX_TASK_ID_CHARS,
  parseTask,
  readResourceResult,
} from "./shapes.ts";

test("M3: a task reads the same from either era's spelling", () => {
  const legacy = parseTask({
    taskId: "t1",
    status: "working",
    ttl: 60000,
    pollInterval: 500,
    createdAt: "x",
  });
  const modern = parseTask({
    taskId: "t1",
    status: "working",
    ttlMs: 60000,
    pollIntervalMs: 500,
    createdAt: "x",
  });
  assert.deepEqual(legacy, {
    taskId: "t1",
    status: "working",
    ttlMs: 60000,
    pollIntervalMs: 500,
    createdAt: "x",
  });
  assert.deepEqual(modern, legacy);
  assert.deepEqual(parseTask({ taskId: "t", status: "completed", ttl: null }), {
    taskId: "t",
    status: "completed",
    ttlMs: null,
  });
});

test("M3: a malformed task is refused: no id, an unknown status, a negative interval, an id past the bound", () => {
  for (const raw of [
    null,
    [],
    { status: "working" },
    { taskId: "", status: "working" },
    { taskId: 7, status: "working" },
    { taskId: "t", status: "sleeping" },
    { taskId: "t", status: "working", pollInterval: -1 },
    { taskId: "t", status: "working", ttl: "1h" },
    { taskId: "t", status: "working", statusMessage: 3 },
    { taskId: "x".repeat(MAX_TASK_ID_CHARS + 1), status: "working" },
  ]) {
    assert.equal(parseTask(raw), undefined, JSON.stringify(raw)?.slice(0, 80));
  }
});

test("M3: a task-augmented reply is a task, an ordinary result, or malformed, per era", () => {
  const task = { taskId: "t", status: "working" };
  assert.deepEqual(createTaskResult({ task }, false), { task });
  assert.equal(createTaskResult({ content: [] }, false), "result");
  assert.equal(createTaskResult({ task: { status: "working" } }, false), undefined);
  assert.deepEqual(createTaskResult({ resultType: "task", ...task }, true), { task });
  assert.equal(createTaskResult({ resultType: "complete", content: [] }, true), "result");
  assert.equal(createTaskResult({ resultType: "task" }, true), undefined);
});

test("M3, S8: completion values must be at most 100 strings", () => {
  assert.ok(completeResult({ completion: { values: ["a"], total: 1, hasMore: false } }));
  assert.equal(completeResult({ completion: { values: "a" } }), undefined);
  assert.equal(completeResult({ completion: { values: [1] } }), undefined);
  assert.equal(completeResult({}), undefined);
  assert.equal(completeResult({ completion: { values: [], total: -1 } }), undefined);
  const many = Array.from({ length: MAX_COMPLETION_VALUES + 1 }, (_, i) => String(i));
  assert.equal(completeResult({ completion: { values: many } }), undefined);
});

test("M3: listed items need their key fields; results need the arrays the client reads", () => {
  assert.ok(admitResource({ uri: "a://b", name: "b" }));
  assert.equal(admitResource({ name: "b" }), undefined);
  assert.ok(admitTemplate({ uriTemplate: "a://{x}", name: "x" }));
  assert.equal(admitTemplate({ uri: "a://b", name: "x" }), undefined);
  assert.ok(admitPrompt({ name: "p", arguments: [] }));
  assert.equal(admitPrompt({ name: "p", arguments: "x" }), undefined);
  assert.ok(readResourceResult({ contents: [{ uri: "a://b", text: "" }] }));
  assert.equal(readResourceResult({ contents: ["x"] }), undefined);
});

test("M2: a log message needs a known level; its data is kept as sent", () => {
  assert.deepEqual(loggingMessage({ level: "info", logger: "l", data: { a: 1 } }), {
    level: "info",
    logger: "l",
    data: { a: 1 },
  });
  assert.equal(loggingMessage({ level: "loud", data: 1 }), undefined);
  assert.equal(loggingMessage({ level: "info", logger: 3, data: 1 }), undefined);
});
