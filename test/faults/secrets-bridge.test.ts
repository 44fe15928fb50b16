// Secrets through the bridge (CONTRACT S4, X2): the host of `tether bridge` is an LLM application,
// and the credentials the bridge holds so that the host never needs them must never reach it. A
// careless server (fixtures/secrets/echo-server.mjs, the official SDK) echoes the bearer token, a
// -H value, a URL query value and -e values, as is, URL-encoded, JSON-escaped and base64 at every
// alignment, into instructions, listings, results, resources, templates, prompts, completions,
// logs, progress, errors and the elicitation and sampling requests it sends the host. Over stdio,
// Streamable HTTP and HTTP+SSE upstream, through both faces (stdio, with a legacy and a
// 2026-07-28 host; --listen, with the official client over Streamable HTTP and HTTP+SSE), every
// byte the host receives is searched for every form of every canary.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Client as V1Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  LoggingMessageNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { envelope, RawHost, startListener } from "../helpers/bridge.ts";
import { assertNoLeak, useEchoServer } from "../helpers/canaries.ts";

const HOST_CAPS = { elicitation: {}, sampling: {} };
const { env: ENV, upstreams: UPSTREAMS } = useEchoServer();

type Message = Record<string, unknown> & { id?: string | number; method?: string };
const resultOf = (m: Message) => m.result as Record<string, unknown> | undefined;

/** Answers the server's requests the bridge forwards to a legacy host: decline, and a short reply. */
function answerAsks(host: RawHost): void {
  const answered = new Set<unknown>();
  const answer = (m: Message) => {
    if (m.id === undefined || answered.has(m.id)) return;
    answered.add(m.id);
    host.send({
      id: m.id,
      result:
        m.method === "elicitation/create"
          ? { action: "decline" }
          : { role: "assistant", content: { type: "text", text: "ok" }, model: "host-model" },
    });
  };
  void host.next((m) => m.method === "elicitation/create").then(answer);
  void host.next((m) => m.method === "sampling/createMessage").then(answer);
}

/** A legacy host on the stdio face asks for everything; what it received is returned as text. */
async function legacyStdioHost(target: string[]): Promise<string> {
  const host = new RawHost(target, ENV);
  try {
    const init = await host.initialize(HOST_CAPS);
    assert.match(
      String(resultOf(init)?.instructions),
      /^Instructions: plain=\[redacted\].*no token is stored/,
    );
    answerAsks(host);
    const asks: [string, Record<string, unknown>][] = [
      ["tools/list", {}],
      ["logging/setLevel", { level: "debug" }],
      ["tools/call", { name: "echo", arguments: {} }],
      ["tools/call", { name: "chatty", arguments: {}, _meta: { progressToken: "p1" } }],
      ["resources/list", {}],
      ["resources/read", { uri: "demo://resource/1" }],
      ["resources/templates/list", {}],
      ["prompts/list", {}],
      ["prompts/get", { name: "greet", arguments: {} }],
      [
        "completion/complete",
        { ref: { type: "ref/prompt", name: "greet" }, argument: { name: "name", value: "a" } },
      ],
      ["tools/call", { name: "fail", arguments: {} }],
      ["tools/call", { name: "ask", arguments: {} }],
    ];
    for (const [i, [method, params]] of asks.entries()) {
      const reply = await host.request(`r${i}`, method, params);
      if (method === "tools/call" && params.name === "fail") assert.ok(reply.error, "fail is an error");
      else assert.ok(reply.result, `${method}: ${JSON.stringify(reply.error)}`);
    }
    const seen = JSON.stringify(host.received);
    for (const kind of [
      "notifications/progress",
      "notifications/message",
      "elicitation/create",
      "sampling/createMessage",
    ])
      assert.ok(
        host.received.some((m) => m.method === kind && JSON.stringify(m).includes("[redacted]")),
        `the host got ${kind}, redacted`,
      );
    assert.match(
      JSON.stringify(resultOf(host.received.find((m) => m.id === "r2")!)),
      /you sent plain=\[redacted\]/,
    );
    assert.equal(await host.end(), 0);
    return `${seen}\n${host.stderr}`;
  } finally {
    host.child.kill("SIGKILL");
  }
}

/** A 2026-07-28 host on the stdio face: every request carries the envelope; questions come as rounds. */
async function modernStdioHost(target: string[]): Promise<string> {
  const host = new RawHost(target, ENV);
  try {
    const env = envelope(HOST_CAPS);
    const discover = await host.request("d", "server/discover", env);
    assert.ok(discover.result, JSON.stringify(discover.error));
    const asks: [string, Record<string, unknown>][] = [
      ["tools/list", {}],
      ["tools/call", { name: "echo", arguments: {} }],
      ["resources/read", { uri: "demo://resource/1" }],
      ["prompts/get", { name: "greet", arguments: {} }],
      [
        "completion/complete",
        { ref: { type: "ref/prompt", name: "greet" }, argument: { name: "name", value: "a" } },
      ],
      ["tools/call", { name: "ask", arguments: {} }],
    ];
    for (const [i, [method, params]] of asks.entries()) {
      const reply = await host.request(`m${i}`, method, { ...params, ...env });
      assert.ok(reply.result, `${method}: ${JSON.stringify(reply.error)}`);
    }
    const round = resultOf(host.received.find((m) => m.id === "m5")!);
    assert.match(
      JSON.stringify(round),
      /elicit plain=\[redacted\]/,
      "the question reached the host, redacted",
    );
    return `${JSON.stringify(host.received)}\n${host.stderr}`;
  } finally {
    host.child.kill("SIGKILL");
  }
}

/** The official client on the --listen face; every byte of every response it read is returned. */
async function listenHost(target: string[], face: "streamable" | "sse"): Promise<string> {
  const listener = await startListener("127.0.0.1:0", target, ENV);
  let seen = "";
  const recording = async (url: string | URL, init?: RequestInit): Promise<Response> => {
    const res = await fetch(url, init);
    if (!res.body) return res;
    const [mine, theirs] = res.body.tee();
    void (async () => {
      const decoder = new TextDecoder();
      for await (const chunk of mine) seen += decoder.decode(chunk, { stream: true });
    })().catch(() => {
      // The host aborted this response (its stream ended with the client): what came is kept.
    });
    return new Response(theirs, { status: res.status, statusText: res.statusText, headers: res.headers });
  };
  const client = new V1Client({ name: "listen-host", version: "1" }, { capabilities: HOST_CAPS });
  const asked: unknown[] = [];
  client.setRequestHandler(ElicitRequestSchema, async (r) => {
    asked.push(r.params);
    return { action: "decline" };
  });
  client.setRequestHandler(CreateMessageRequestSchema, async (r) => {
    asked.push(r.params);
    return { role: "assistant", content: { type: "text", text: "ok" }, model: "host-model" };
  });
  const logs: unknown[] = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, async (n) => {
    logs.push(n.params);
  });
  const transport =
    face === "streamable"
      ? new StreamableHTTPClientTransport(new URL(listener.mcp), { fetch: recording })
      : new SSEClientTransport(new URL(listener.sse), {
          fetch: recording,
          eventSourceInit: { fetch: recording },
        });
  try {
    await client.connect(transport);
    assert.match(String(client.getInstructions()), /^Instructions: plain=\[redacted\]/);
    const tools = await client.listTools();
    assert.match(String(tools.tools[0]?.description), /\[redacted\]/);
    await client.setLoggingLevel("debug");
    const progress: unknown[] = [];
    const echo = await client.callTool({ name: "echo", arguments: {} });
    assert.match(JSON.stringify(echo), /you sent plain=\[redacted\]/);
    await client.callTool({ name: "chatty", arguments: {} }, undefined, {
      onprogress: (p) => progress.push(p),
    });
    await client.readResource({ uri: "demo://resource/1" });
    await client.listResourceTemplates();
    await client.getPrompt({ name: "greet", arguments: {} });
    await client.complete({
      ref: { type: "ref/prompt", name: "greet" },
      argument: { name: "name", value: "a" },
    });
    await assert.rejects(client.callTool({ name: "fail", arguments: {} }));
    await client.callTool({ name: "ask", arguments: {} });
    assert.equal(asked.length, 2, "the elicitation and sampling requests reached the host");
    assert.match(JSON.stringify(asked), /elicit plain=\[redacted\]/);
    assert.ok(logs.length > 0, "a log line reached the host");
    // Progress is checked on the wire: SDK 1.32's HTTP+SSE client does not hand it to onprogress.
    assert.match(
      seen,
      /"method":"notifications\/progress","params":\{"progressToken":[^}]*"message":"progress plain=\[redacted\]/,
    );
    return `${seen}\n${JSON.stringify({ asked, logs, progress })}\n${listener.stderr()}`;
  } finally {
    await client.close().catch(() => {});
    await listener.stop();
  }
}

describe("secrets through the bridge", { concurrency: true }, () => {
  for (const [upstream, target] of Object.entries(UPSTREAMS)) {
    test(`S4: bridge stdio face, legacy host, ${upstream} upstream: no canary in anything the host receives`, async () => {
      assertNoLeak(await legacyStdioHost(target()), `legacy host over ${upstream}`);
    });
    test(`S4: bridge stdio face, 2026-07-28 host, ${upstream} upstream: no canary in results or rounds`, async () => {
      assertNoLeak(await modernStdioHost(target()), `modern host over ${upstream}`);
    });
    test(`S4: bridge --listen, Streamable HTTP host, ${upstream} upstream: no canary in any response byte`, async () => {
      assertNoLeak(await listenHost(target(), "streamable"), `listen host over ${upstream}`);
    });
  }
  test("S4: bridge --listen, HTTP+SSE host, Streamable HTTP upstream: no canary in any response byte", async () => {
    assertNoLeak(await listenHost(UPSTREAMS["streamable-http"]!(), "sse"), "SSE host");
  });
});
