// The explorer's server is reachable only by the user who started it (CONTRACT S9): plain HTTP
// requests, the way another local process or a hostile page's browser would send them. And
// Ctrl-C ends it with every process it started (S6).

import assert from "node:assert/strict";
import { type AddressInfo, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { errorRecord, runCli } from "../helpers/cli.ts";
import { api, type ExplorerRun, HOSTILE, raw, startExplorer, writeConfig } from "../helpers/inspect.ts";
import { running } from "../helpers/process-tree.ts";
import { sandboxFor } from "../sessions/sandbox.ts";

const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; " +
  "media-src 'self' data: blob:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

let run: ExplorerRun;
before(async () => {
  run = await startExplorer(["--", process.execPath, HOSTILE]);
});
after(async () => {
  if (run.cli.child.exitCode === null) await run.stop();
});

const PATHS: [string, string][] = [
  ["GET", "/"],
  ["GET", "/page.js"],
  ["GET", "/page.css"],
  ["GET", "/api/servers"],
  ["GET", "/api/events"],
  ["POST", "/api/call"],
  ["POST", "/api/connect"],
  ["GET", "/favicon.ico"],
];

test("S9: the URL is printed first, on loopback, with a long token made for this launch", async () => {
  assert.match(run.url, /^http:\/\/127\.0\.0\.1:\d+\/\?token=[A-Za-z0-9_-]{32,}$/);
  const other = await startExplorer(["--", process.execPath, HOSTILE]);
  try {
    assert.notEqual(other.token, run.token, "each launch makes its own token");
  } finally {
    await other.stop();
  }
});

test("S9: without the token every path answers 401, and nothing it sends names the token", async () => {
  for (const [method, path] of PATHS) {
    const tries: Record<string, string>[] = [
      {},
      { authorization: "Bearer wrong" },
      { cookie: "tether_inspect=guess" },
    ];
    for (const headers of tries) {
      const res = await raw(run.base, path, {
        method,
        headers: { ...headers, "content-type": "application/json" },
        body: method === "POST" ? '{"server":"s1"}' : undefined,
      });
      assert.equal(res.status, 401, `${method} ${path} ${JSON.stringify(headers)}`);
      assert.ok(!res.body.includes(run.token) && !JSON.stringify(res.headers).includes(run.token), path);
      assert.equal(res.headers["set-cookie"], undefined, path);
    }
  }
  const wrong = await raw(run.base, "/?token=not-the-token");
  assert.equal(wrong.status, 401);
  assert.equal(wrong.headers["set-cookie"], undefined);
});

test("S9: a foreign Origin, a cross-site fetch or a Host not the one served is refused with 403, token or not", async () => {
  const bearer = { authorization: `Bearer ${run.token}` };
  const port = new URL(run.base).port;
  const refused: Record<string, string>[] = [
    { origin: "http://evil.example" },
    { origin: `http://localhost:${port}` },
    { origin: "null" },
    { host: `localhost:${port}` },
    { host: "evil.example" },
    { host: `127.0.0.1:${Number(port) + 1}` },
    { "sec-fetch-site": "cross-site" },
  ];
  for (const headers of refused)
    for (const [method, path] of PATHS) {
      const res = await raw(run.base, path, {
        method,
        headers: { ...bearer, ...headers, "content-type": "application/json" },
        body: method === "POST" ? '{"server":"s1"}' : undefined,
      });
      assert.equal(res.status, 403, `${method} ${path} ${JSON.stringify(headers)}`);
      assert.ok(!res.body.includes(run.token));
    }
  // The same requests with the right Host and Origin pass.
  const ok = await raw(run.base, "/api/servers", { headers: { ...bearer, origin: run.base } });
  assert.equal(ok.status, 200);
});

test("S9: the token is traded for an HttpOnly, SameSite=Strict cookie, and the page carries its CSP", async () => {
  const trade = await raw(run.base, `/?token=${run.token}`);
  assert.equal(trade.status, 303);
  assert.equal(trade.headers.location, "/", "the token leaves the address bar");
  const setCookie = String(trade.headers["set-cookie"]);
  assert.match(setCookie, /HttpOnly/);
  assert.match(setCookie, /SameSite=Strict/);
  assert.ok(!setCookie.includes(run.token), "the cookie is not the token");
  const cookie = setCookie.split(";")[0]!;
  const page = await raw(run.base, "/", { headers: { cookie } });
  assert.equal(page.status, 200);
  // The one frame the page may hold: an MCP App, from the apps listener (another port, on loopback).
  const frameSrc = /; frame-src http:\/\/127\.0\.0\.1:(\d+)$/.exec(
    String(page.headers["content-security-policy"]),
  );
  assert.ok(
    frameSrc && frameSrc[1] !== new URL(run.base).port,
    String(page.headers["content-security-policy"]),
  );
  assert.equal(page.headers["content-security-policy"], `${CSP}${frameSrc[0]}`);
  assert.equal(page.headers["x-frame-options"], "DENY");
  assert.equal(page.headers["x-content-type-options"], "nosniff");
  assert.equal(page.headers["referrer-policy"], "no-referrer");
  assert.ok(!page.body.includes(run.token), "the page does not embed the token");
  assert.doesNotMatch(page.body, /<script(?![^>]*\bsrc="\/page\.js")/, "no inline script");
  assert.doesNotMatch(page.body, /(src|href)="(https?:)?\/\//, "nothing from another origin");
  for (const path of ["/page.js", "/page.css"]) {
    const asset = await raw(run.base, path, { headers: { cookie } });
    assert.equal(asset.status, 200, path);
    assert.equal(asset.headers["x-content-type-options"], "nosniff");
    assert.ok(!asset.body.includes(run.token));
  }
});

test("S9: request bodies are bounded (413) and the API takes JSON only (415)", async () => {
  const headers = { authorization: `Bearer ${run.token}`, "content-type": "application/json" };
  const big = await raw(run.base, "/api/call", {
    method: "POST",
    headers,
    body: Buffer.alloc(1024 * 1024 + 10, 32),
  });
  assert.equal(big.status, 413);
  const form = await raw(run.base, "/api/connect", {
    method: "POST",
    headers: { authorization: `Bearer ${run.token}`, "content-type": "application/x-www-form-urlencoded" },
    body: "server=s1",
  });
  assert.equal(form.status, 415);
});

test("a call's arguments are checked before it is sent, with the CLI's messages", async () => {
  const answer = await api(run, "call", { server: "s1", tool: "markup", args: { nope: 1 }, callId: "bad" });
  assert.equal(answer.ok, false);
  const error = answer.error as Record<string, unknown>;
  assert.equal(error.code, "config");
  assert.equal(error.reason, "unknown_argument");
  assert.match(String(error.message), /^markup has no argument "nope".*its arguments: note$/);
  assert.equal(error.hint, undefined);
});

test("replay sends again only the requests that ask (and tool calls), nothing else", async () => {
  const headers = { authorization: `Bearer ${run.token}`, "content-type": "application/json" };
  for (const method of ["initialize", "notifications/cancelled", "logging/setLevel", "tasks/cancel"]) {
    const res = await raw(run.base, "/api/replay", {
      method: "POST",
      headers,
      body: JSON.stringify({ server: "s1", method, params: {} }),
    });
    assert.equal(res.status, 400, method);
  }
  const ok = await api(run, "replay", {
    server: "s1",
    method: "tools/call",
    params: { name: "pid", arguments: {} },
  });
  assert.equal(ok.ok, true, JSON.stringify(ok));
});

test("a port in use is the user's to change (config, exit 2), and nothing is printed on stdout", async () => {
  const taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
  try {
    const port = (taken.address() as AddressInfo).port;
    const r = await runCli(["inspect", "--no-open", "--port", String(port), "--", process.execPath, HOSTILE]);
    assert.equal(r.code, 2, r.stderr);
    assert.equal(errorRecord(r).reason, "listen_failed");
    assert.equal(r.stdout, "");
  } finally {
    await new Promise((resolve) => taken.close(resolve));
  }
});

test("S9: another address needs --allow-remote (exit 2)", async () => {
  const r = await runCli(["inspect", "--no-open", "--host", "0.0.0.0", "--", process.execPath, HOSTILE]);
  assert.equal(r.code, 2);
  assert.equal(errorRecord(r).code, "config");
  assert.equal(r.stdout, "");
});

test("with no target the config file's servers are listed, unconnected; a failed connect answers its error record", async () => {
  const missing = join(tmpdir(), `tether-no-such-server-${process.pid}`);
  const { dir, config, remove } = writeConfig({
    hostile: { command: process.execPath, args: [HOSTILE] },
    missing: { command: missing },
  });
  const listed = await startExplorer(["--config", config], { HOME: dir });
  try {
    const res = await raw(listed.base, "/api/servers", {
      headers: { authorization: `Bearer ${listed.token}` },
    });
    const servers = (JSON.parse(res.body) as { servers: Record<string, unknown>[] }).servers;
    assert.deepEqual(
      servers.map((s) => [s.name, s.state, s.transport]),
      [
        ["hostile", "idle", "stdio"],
        ["missing", "idle", "stdio"],
      ],
    );
    const failed = await api(listed, "connect", { server: servers[1]!.id });
    const record = (failed.server as { state: string; error: Record<string, unknown> }).error;
    assert.equal((failed.server as { state: string }).state, "failed");
    assert.equal(record.code, "connection");
    assert.equal(record.stage, "spawn");
    assert.equal(record.phase, "discovery");
    assert.match(String(record.message), /no-such-server/);
    assert.match(String(record.hint), /^cause: /, "the cause, as --debug would say it");
    const ok = await api(listed, "connect", { server: servers[0]!.id });
    assert.equal((ok.server as { state: string }).state, "open");
  } finally {
    await listed.stop();
    remove();
  }
});

test("with no target a live session is listed too, and reached through its session process", async (t) => {
  const box = sandboxFor(t);
  const started = await box.run(["session", "start", "demo", "--", process.execPath, HOSTILE]);
  assert.equal(started.code, 0, started.stderr);
  const listed = await startExplorer([], box.env);
  try {
    const res = await raw(listed.base, "/api/servers", {
      headers: { authorization: `Bearer ${listed.token}` },
    });
    const servers = (JSON.parse(res.body) as { servers: Record<string, unknown>[] }).servers;
    const session = servers.find((s) => s.name === "@demo");
    assert.equal(session?.source, "session", JSON.stringify(servers));
    const tools = await api(listed, "tools", { server: session.id });
    assert.ok(
      (tools.tools as { name: string }[]).some((tool) => tool.name === "pid"),
      JSON.stringify(tools),
    );
  } finally {
    await listed.stop();
    await box.run(["session", "stop", "demo"]);
  }
});

test("S6: Ctrl-C ends the explorer, its connection and the stdio server's process; stdout is the one URL line", async () => {
  const answer = await api(run, "call", { server: "s1", tool: "pid", args: {}, callId: "pid" });
  assert.equal(answer.ok, true, JSON.stringify(answer));
  const content = (answer.result as { content: { text: string }[] }).content;
  const pid = Number(content[0]!.text);
  assert.ok(pid > 0 && running(pid), "the server runs");
  const exit = await run.stop();
  assert.equal(exit.code, 0, exit.stderr);
  assert.equal(running(pid), false, "the stdio server is gone when the explorer has exited");
  assert.equal(exit.stdout, `${run.url}\n`);
});

test("S6: SIGTERM ends the explorer and the stdio server's process as Ctrl-C does", async () => {
  const other = await startExplorer(["--", process.execPath, HOSTILE]);
  const answer = await api(other, "call", { server: "s1", tool: "pid", args: {}, callId: "pid" });
  const pid = Number((answer.result as { content: { text: string }[] }).content[0]!.text);
  assert.ok(pid > 0 && running(pid), "the server runs");
  other.cli.signal("SIGTERM");
  const exit = await other.cli.exited;
  assert.equal(exit.code, 0, exit.stderr);
  assert.equal(running(pid), false, "the stdio server is gone when the explorer has exited");
});

test("S6: Ctrl-C with a server's question waiting for an answer still ends everything at once", async () => {
  const other = await startExplorer(["--", process.execPath, HOSTILE]);
  const answer = await api(other, "call", { server: "s1", tool: "pid", args: {}, callId: "pid" });
  const pid = Number((answer.result as { content: { text: string }[] }).content[0]!.text);
  // The event stream says when the question is waiting (no guessing how long that takes).
  const stream = await fetch(`${other.base}/api/events`, {
    headers: { authorization: `Bearer ${other.token}` },
  });
  const asked = (async () => {
    let text = "";
    const decoder = new TextDecoder();
    for await (const chunk of stream.body as unknown as AsyncIterable<Uint8Array>) {
      text += decoder.decode(chunk);
      if (text.includes('"kind":"ask"')) return;
    }
  })();
  const waiting = api(other, "call", { server: "s1", tool: "link", args: {}, callId: "link" }).catch(
    () => undefined,
  );
  await asked;
  const sent = other.cli.signal("SIGINT");
  const exit = await other.cli.exited;
  await waiting;
  assert.equal(exit.code, 0, exit.stderr);
  assert.equal(running(pid), false, "the stdio server is gone when the explorer has exited");
  assert.ok(exit.exitedAt - sent < 10_000, `exited ${Math.round(exit.exitedAt - sent)} ms after Ctrl-C`);
});

test("--events prints each connection's lifecycle events on stderr; stdout stays the one URL line", async () => {
  const other = await startExplorer(["--events", "--", process.execPath, HOSTILE]);
  const connected = await api(other, "connect", { server: "s1" });
  assert.equal((connected.server as { state: string }).state, "open");
  const exit = await other.stop();
  assert.equal(exit.stdout, `${other.url}\n`);
  const events = exit.stderr
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { type: string });
  assert.ok(
    events.some((e) => e.type === "established"),
    exit.stderr,
  );
});
