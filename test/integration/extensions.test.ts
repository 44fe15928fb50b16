// Extensions (SEP-2133, M4): what the caller declares reaches a real server in every era, through
// `initialize` before 2026-07-28 and in each request's envelope after; what the server declares is
// `client.serverExtensions`; a malformed declaration is a `config` error before anything starts.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { type ConnectOptions, connect, type ProtocolVersion, TetherError } from "../../src/index.ts";
import { declaredExtensions, extensionsProblem, withExtensions } from "../../src/protocol/extensions.ts";

const FIXTURE = fileURLToPath(new URL("../fixtures/extensions/server.mjs", import.meta.url));
const SERVER_EXTENSIONS = { "com.example/feature": { level: 2 }, "io.modelcontextprotocol/ui": {} };
const OURS = {
  "com.example/client-side": { x: 1 },
  "io.modelcontextprotocol/ui": { mimeTypes: ["text/html;profile=mcp-app"] },
};

const base = (settings: Partial<ConnectOptions>): ConnectOptions =>
  ({
    command: process.execPath,
    args: [FIXTURE],
    eraHints: false,
    timeoutMs: 20_000,
    ...settings,
  }) as ConnectOptions;

describe("extensions with a real server (M4)", () => {
  for (const version of ["2026-07-28", "2025-11-25", "2024-11-05"] as ProtocolVersion[]) {
    test(`${version}: the server sees ours, and we see the server's`, async () => {
      const client = await connect(base({ protocolVersion: version, extensions: OURS }));
      try {
        assert.deepEqual({ ...client.serverExtensions }, SERVER_EXTENSIONS);
        const result = await client.callTool("client-extensions", {});
        const seen = JSON.parse((result.content[0] as { text: string }).text);
        assert.deepEqual(seen, OURS);
      } finally {
        await client.close();
      }
    });
  }

  test("without a declaration the server sees none, and the handlers' capabilities are unchanged", async () => {
    const client = await connect(base({ protocolVersion: "2025-11-25" }));
    try {
      const result = await client.callTool("client-extensions", {});
      assert.equal((result.content[0] as { text: string }).text, "null");
    } finally {
      await client.close();
    }
  });

  test("a malformed declaration is a config error before the server is started", async () => {
    for (const extensions of [
      { "no-prefix": {} },
      { "com.example/ok": true },
      { "com.example/ok": [] },
      { "com.example/big": { blob: "x".repeat(70_000) } },
      Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`com.example/e${i}`, {}])),
    ]) {
      await assert.rejects(
        connect(base({ command: "/nonexistent/never-started", extensions: extensions as never })),
        (e: unknown) => e instanceof TetherError && e.code === "config" && /extension/.test(e.message),
      );
    }
  });
});

describe("the extension map (M4)", () => {
  test("ids need a vendor prefix; settings must be objects", () => {
    assert.equal(
      extensionsProblem({ "io.modelcontextprotocol/ui": {}, "com.example/a-b_c.d": { k: [1] } }),
      undefined,
    );
    assert.match(extensionsProblem({ "/x": {} }) ?? "", /not an extension id/);
    assert.match(extensionsProblem({ "com.example/": {} }) ?? "", /not an extension id/);
    assert.match(extensionsProblem({ "com..example/x": {} }) ?? "", /not an extension id/);
    assert.match(extensionsProblem({ "com.example/x": "yes" }) ?? "", /must be an object/);
    assert.match(extensionsProblem([]) ?? "", /must be an object/);
  });

  test("declarations merge into the capabilities without dropping what is there", () => {
    const caps = { elicitation: {}, extensions: { "com.example/a": { v: 1 } } };
    assert.deepEqual(withExtensions(caps, { "com.example/b": {} }), {
      elicitation: {},
      extensions: { "com.example/a": { v: 1 }, "com.example/b": {} },
    });
    assert.equal(withExtensions(caps, {}), caps);
  });

  test("what a server declares is read leniently but never trusted for shape", () => {
    const seen = declaredExtensions({
      extensions: {
        "com.example/a": { v: 1 },
        "com.example/b": true,
        "com.example/c": 3,
        "bad id": {},
        "com.example/d": null,
      },
    });
    assert.deepEqual({ ...seen }, { "com.example/a": { v: 1 }, "com.example/b": {}, "com.example/d": {} });
    assert.deepEqual({ ...declaredExtensions({ extensions: [] }) }, {});
    assert.deepEqual({ ...declaredExtensions(undefined) }, {});
  });
});
