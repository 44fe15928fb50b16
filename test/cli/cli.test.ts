import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, test } from "node:test";
import { runCli } from "../helpers/cli.ts";
import { useFleet } from "../helpers/fleet.ts";
import { modernStreamableHandler, startHttp } from "../helpers/hostile.ts";

const TOKEN_CANARY = "tok-CANARY-91c2e7d4f0";
const QUERY_CANARY = "qry-CANARY-5b8a13ee72";
const HEADER_CANARY = "hdr-CANARY-0d4f6a9b31";

function noCanary(text: string): void {
  for (const c of [TOKEN_CANARY, QUERY_CANARY, HEADER_CANARY, "CANARY"])
    assert.ok(!text.includes(c), `output contains ${c}: ${text}`);
}

/** Asserts K1: exactly one stderr line, a parseable record, nothing on stdout, the table's exit status. */
function assertFailure(
  run: { code: number | null; stdout: string; stderr: string },
  code: string,
  exit: number,
) {
  assert.equal(run.stdout, "", "nothing on stdout");
  const lines = run.stderr.trim().split("\n");
  assert.equal(lines.length, 1, `one stderr line, got: ${run.stderr}`);
  const record = JSON.parse(lines[0]!) as Record<string, unknown>;
  assert.equal(record.type, "error");
  assert.equal(record.code, code, run.stderr);
  assert.equal(run.code, exit);
  for (const k of ["code", "reason", "stage", "phase", "message", "attempt"])
    assert.ok(k in record, `record has ${k}`);
  assert.doesNotMatch(run.stderr, /\bat .+:\d+:\d+/, "no stack trace");
  return record;
}

/** A loopback server whose every answer echoes the request back: URL, headers and all. */
function echoingServer(status: number) {
  let gets = 0;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (req.method === "GET") gets++;
    let body = "";
    req.on("data", (d) => {
      body += d;
    });
    req.on("end", () => {
      const echo = JSON.stringify({
        jsonrpc: "2.0",
        id: null,
        error: { code: -32600, message: `denied ${req.url} ${JSON.stringify(req.headers)} ${body}` },
      });
      res.writeHead(status, { "content-type": "application/json" }).end(echo);
    });
  });
  return {
    server,
    gets: () => gets,
    start: () =>
      new Promise<string>((r) =>
        server.listen(0, "127.0.0.1", () =>
          r(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`),
        ),
      ),
    stop: () => new Promise<void>((r) => server.close(() => r())),
  };
}

describe("canaries", () => {
  test("X2: a --bearer-env token and URL query secret appear nowhere, even when a 401 body echoes the request", async () => {
    const s = echoingServer(401);
    const url = await s.start();
    try {
      const run = await runCli(
        [
          "tools",
          `${url}?key=${QUERY_CANARY}`,
          "--bearer-env",
          "TETHER_TEST_TOKEN",
          "-H",
          `X-Extra: ${HEADER_CANARY}`,
        ],
        {
          env: { TETHER_TEST_TOKEN: TOKEN_CANARY },
        },
      );
      const record = assertFailure(run, "unauthorized", 6);
      assert.equal(record.httpStatus, 401);
      noCanary(run.stdout + run.stderr);
      assert.equal(s.gets(), 0, "N5: a 401 is never era evidence: no HTTP+SSE attempt");
      const debug = await runCli(
        ["call", `${url}?key=${QUERY_CANARY}`, "echo", "--debug", "--bearer-env", "T"],
        { env: { T: TOKEN_CANARY } },
      );
      assertFailure(debug, "unauthorized", 6);
      noCanary(debug.stdout + debug.stderr);
    } finally {
      await s.stop();
    }
  });

  test("X4: a 500 that echoes secrets is upstream (exit 7) and scrubbed; a 403 is forbidden (exit 6)", async () => {
    for (const [status, code, exit] of [
      [500, "upstream", 7],
      [403, "forbidden", 6],
      [429, "throttled", 7],
    ] as const) {
      const s = echoingServer(status);
      const url = await s.start();
      try {
        const run = await runCli(["tools", `${url}?key=${QUERY_CANARY}`, "--bearer-env", "T"], {
          env: { T: TOKEN_CANARY },
        });
        assertFailure(run, code, exit);
        noCanary(run.stdout + run.stderr);
        assert.equal(s.gets(), 0);
      } finally {
        await s.stop();
      }
    }
  });
});

describe("exit statuses", () => {
  test("K1: configuration errors exit 2 with one record naming the flag", async () => {
    for (const args of [
      [
        "tools",
        "http://127.0.0.1:1/mcp",
        "--protocol-version",
        "2025-06-18",
        "--max-protocol-version",
        "2025-11-25",
      ],
      ["tools", "http://127.0.0.1:1/mcp", "--timeout", "0"],
      ["tools", "http://127.0.0.1:1/mcp", "--timeout", "1.5"],
      ["tools", "http://127.0.0.1:1/mcp", "--timeout", "abc"],
      ["tools", "http://127.0.0.1:1/mcp", "--max-bytes", "-5"],
      ["tools", "http://127.0.0.1:1/mcp", "--no-such-flag"],
      ["tools", "http://127.0.0.1:1/mcp", "--protocol-version", "2099-01-01"],
      ["call", "http://127.0.0.1:1/mcp", "echo", "not-a-pair"],
      ["tools", "no-such-configured-server", "--config", "/nonexistent/tether.json"],
      ["frobnicate", "x"],
    ]) {
      const run = await runCli(args);
      const record = assertFailure(run, "config", 2);
      assert.equal(record.stage, "config");
    }
  });

  test("K1: a refused connection exits 3", async () => {
    const s = echoingServer(200);
    const url = await s.start();
    await s.stop();
    const run = await runCli(["tools", url, "--timeout", "5000"]);
    const record = assertFailure(run, "connection", 3);
    assert.equal(record.reason, "refused");
  });

  test("K1: a server that never answers exits 4 within the budget", async () => {
    const hanging = createServer(() => {});
    await new Promise<void>((r) => hanging.listen(0, "127.0.0.1", () => r()));
    const url = `http://127.0.0.1:${(hanging.address() as AddressInfo).port}/mcp`;
    try {
      const run = await runCli(["tools", url, "--discovery-timeout", "400"]);
      const record = assertFailure(run, "timeout", 4);
      assert.equal(record.reason, "deadline_exceeded");
      assert.equal(record.phase, "discovery");
      // A bound on hanging, the CLI's own start included, loose enough for a loaded machine.
      assert.ok(run.elapsedMs < 400 + 10_000, `took ${run.elapsedMs} ms`);
    } finally {
      hanging.closeAllConnections();
      await new Promise<void>((r) => hanging.close(() => r()));
    }
  });
});

describe("against the example servers", () => {
  const fleet = useFleet(["streamable-2025-11-25-json", "modern-2026-07-28", "legacy-stdio"]);

  test("K1: tools and call succeed with empty stderr; --json is one document", async () => {
    const url = fleet().http("modern-2026-07-28").url;
    const tools = await runCli(["tools", url, "--json"]);
    assert.equal(tools.code, 0, tools.stderr);
    assert.equal(tools.stderr, "");
    const doc = JSON.parse(tools.stdout) as { tools: { name: string }[] };
    assert.ok(doc.tools.some((t) => t.name === "echo"));
    const call = await runCli(["call", url, "echo", "message=héllo"]);
    assert.equal(call.code, 0, call.stderr);
    assert.equal(call.stdout, "héllo\n");
    assert.equal(call.stderr, "");
    const json = await runCli(["call", url, "add", '{"a":2,"b":3}', "--json"]);
    assert.equal((JSON.parse(json.stdout) as { content: { text: string }[] }).content[0]!.text, "5");
  });

  test("K1: a stdio target after --, with options before it", async () => {
    const s = fleet().stdioServer("legacy-stdio");
    const run = await runCli(["call", "echo", "message=hi", "--json", "--", s.command, ...s.args]);
    assert.equal(run.code, 0, run.stderr);
    assert.equal((JSON.parse(run.stdout) as { content: { text: string }[] }).content[0]!.text, "hi");
  });

  test("K1: a tool result with isError exits 1 and prints the text", async () => {
    const run = await runCli(["call", fleet().http("streamable-2025-11-25-json").url, "fail"]);
    assert.equal(run.code, 1);
    assert.match(run.stdout, /tool failed on purpose/);
  });

  test("P8: a reply over the call byte ceiling exits 5, says so, and reports observedBytes", async () => {
    const run = await runCli([
      "call",
      fleet().http("streamable-2025-11-25-json").url,
      "big",
      "bytes:=200000",
      "--call-max-bytes",
      "10000",
    ]);
    const record = assertFailure(run, "limit", 5);
    assert.equal(record.phase, "call");
    assert.equal(record.reason, "response_too_large");
    // A declared Content-Length over the ceiling is refused before reading: nothing observed.
    assert.equal(record.observedBytes, 0);
  });

  test("P7: SIGINT during a call exits 130 with code cancelled", async () => {
    let callArrived!: () => void;
    const arrived = new Promise<void>((resolve) => {
      callArrived = resolve;
    });
    // A modern server whose tools/call never answers: the call is in flight until the signal.
    const server = await startHttp(
      modernStreamableHandler({
        "tools/call": () => {
          callArrived();
        },
      }),
    );
    try {
      // The call reached the server, so the CLI (which installs its handlers first) is mid-call.
      const run = await runCli(["call", server.url, "echo", "text=hi"], {
        signalWhen: { signal: "SIGINT", ready: arrived },
      });
      const record = assertFailure(run, "cancelled", 130);
      assert.equal(record.stage, "call");
    } finally {
      await server.close();
    }
  });

  test("P8: a call that times out reports effect unknown and exits 4", async () => {
    const run = await runCli([
      "call",
      fleet().http("streamable-2025-11-25-json").url,
      "slow",
      "ms:=5000",
      "--call-timeout",
      "300",
    ]);
    const record = assertFailure(run, "timeout", 4);
    assert.equal(record.effect, "unknown");
    assert.equal(record.phase, "call");
  });
});
