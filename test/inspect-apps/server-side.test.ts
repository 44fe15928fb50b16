// The server's half of MCP Apps, without a browser: the apps listener refuses everything but a
// published document asked for by its own address into a frame; a resource's declared CSP keeps
// only plain origins; a tool's `ui://` resource is found in both metadata forms; and the UI
// extension a client declares reaches the server, which then offers its app.

import assert from "node:assert/strict";
import { request } from "node:http";
import { after, before, describe, test } from "node:test";
import type { Client } from "../../src/client/api.ts";
import { connect, TetherError } from "../../src/index.ts";
import { AppFrames } from "../../src/inspect/apps/frames.ts";
import {
  APPS_EXTENSIONS,
  appResourceUri,
  declaredCsp,
  readAppResource,
} from "../../src/inspect/apps/resource.ts";
import { APPS_FIXTURE } from "./harness.ts";

/** One GET (or another method) to the listener with exactly these headers. */
function get(
  url: string,
  headers: Record<string, string>,
  method = "GET",
): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers, setHost: false }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (d) => {
        body += d;
      });
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

describe("the apps listener", () => {
  let frames: AppFrames;
  const ancestor = "http://127.0.0.1:1234";
  const csp = { connectDomains: [], resourceDomains: [], frameDomains: [], baseUriDomains: [] };
  before(async () => {
    frames = await AppFrames.listen({ frameAncestor: ancestor });
  });
  after(async () => {
    await frames.close();
  });

  test("S9: serves a published document into a frame of its own address, with its CSP, and nothing else", async () => {
    const { url, csp: policy } = frames.publish("<p>hello</p>", csp);
    const host = new URL(url).host;
    const ok = await get(url, { host, "sec-fetch-dest": "iframe" });
    assert.equal(ok.status, 200);
    assert.equal(ok.body, "<p>hello</p>");
    assert.equal(ok.headers["content-security-policy"], policy);
    assert.match(policy, /^default-src 'none'; script-src 'unsafe-inline'; /);
    assert.match(policy, /; connect-src 'none'; /);
    assert.match(policy, new RegExp(`; frame-ancestors ${ancestor}; sandbox allow-scripts allow-forms$`));
    assert.equal(ok.headers["x-content-type-options"], "nosniff");
    assert.equal(ok.headers["cache-control"], "no-store");

    // DNS rebinding: a name that resolves here is not this listener's address.
    assert.equal((await get(url, { host: `evil.example:${new URL(url).port}` })).status, 403);
    // Opened on its own (a tab, a fetch), not in a frame.
    assert.equal((await get(url, { host, "sec-fetch-dest": "document" })).status, 403);
    assert.equal((await get(url, { host, "sec-fetch-dest": "empty" })).status, 403);
    assert.equal((await get(url, { host }, "POST")).status, 405);
    assert.equal((await get(`${frames.origin}/`, { host })).status, 404);
    // One character off (never the same one: the random path may end in either).
    const off = url.endsWith("A") ? "B" : "A";
    assert.equal((await get(`${url.slice(0, -1)}${off}`, { host })).status, 404);
    frames.revoke(url);
    assert.equal((await get(url, { host })).status, 404);
  });

  test("keeps a bounded number of documents, forgetting the oldest", async () => {
    const first = frames.publish("<p>first</p>", csp).url;
    const host = new URL(first).host;
    for (let i = 0; i < 64; i++) frames.publish(`<p>${i}</p>`, csp);
    assert.equal((await get(first, { host })).status, 404);
  });
});

describe("a resource's declared CSP", () => {
  test("S9: keeps plain origins and refuses anything that could widen the policy", () => {
    const { csp, refused } = declaredCsp({
      csp: {
        connectDomains: ["https://api.example.com", "wss://live.example.com:8443", "https://api.example.com"],
        resourceDomains: [
          "https://*.cdn.example.com",
          "https://a.example.com; script-src *",
          "*",
          "https:",
          "'unsafe-eval'",
          "data:",
          "javascript:alert(1)",
          "https://a.example.com/path",
          "https://a.example.com 'unsafe-eval'",
          42,
        ],
        frameDomains: "https://frames.example.com",
      },
    });
    assert.deepEqual(csp, {
      connectDomains: ["https://api.example.com", "wss://live.example.com:8443"],
      resourceDomains: ["https://*.cdn.example.com"],
      frameDomains: [],
      baseUriDomains: [],
    });
    assert.deepEqual(refused, [
      "resourceDomains: https://a.example.com; script-src *",
      "resourceDomains: *",
      "resourceDomains: https:",
      "resourceDomains: 'unsafe-eval'",
      "resourceDomains: data:",
      "resourceDomains: javascript:alert(1)",
      "resourceDomains: https://a.example.com/path",
      "resourceDomains: https://a.example.com 'unsafe-eval'",
      "resourceDomains: 42",
      "frameDomains: not a list",
    ]);
    const many = declaredCsp({
      csp: { connectDomains: Array.from({ length: 40 }, (_, i) => `https://h${i}.example.com`) },
    });
    assert.equal(many.csp.connectDomains.length, 32);
    assert.equal(many.refused.length, 8);
  });

  test("a tool names its app in either metadata form, and only a ui:// one counts", () => {
    assert.equal(appResourceUri({ _meta: { ui: { resourceUri: "ui://a/b" } } }), "ui://a/b");
    assert.equal(appResourceUri({ _meta: { "ui/resourceUri": "ui://a/c" } }), "ui://a/c");
    assert.equal(appResourceUri({ _meta: { ui: { resourceUri: "https://a/b" } } }), undefined);
    assert.equal(appResourceUri({}), undefined);
  });

  test("a resource of another type is not an app", async () => {
    const client = {
      readResource: async () => ({
        contents: [{ uri: "ui://a/b", mimeType: "text/html", text: "<p>x</p>" }],
      }),
      redact: <T>(v: T) => v,
    };
    await assert.rejects(
      readAppResource(client, "ui://a/b"),
      (e: unknown) =>
        e instanceof TetherError &&
        e.code === "protocol" &&
        e.reason === "not_an_app" &&
        e.message ===
          "ui://a/b is not an MCP App: text/html;profile=mcp-app expected, the server sent text/html",
    );
  });
});

describe("the UI extension", () => {
  let client: Client | undefined;
  after(async () => {
    await client?.close();
  });

  test("M4: a client that declares it tells the server, which offers its app", async () => {
    client = await connect({ command: process.execPath, args: [APPS_FIXTURE], extensions: APPS_EXTENSIONS });
    const declared = await client.callTool("extensions", {});
    assert.deepEqual(JSON.parse((declared.content[0] as { text: string }).text), {
      "io.modelcontextprotocol/ui": { mimeTypes: ["text/html;profile=mcp-app"] },
    });
    const probe = (await client.listTools()).find((t) => t.name === "probe")!;
    const app = await readAppResource(client, appResourceUri(probe)!);
    assert.match(app.html, /^<!doctype html>/);
  });

  test("an app whose read content declares no CSP takes the one its resources/list entry declares", async () => {
    const own = await connect({
      command: process.execPath,
      args: [APPS_FIXTURE],
      extensions: APPS_EXTENSIONS,
    });
    try {
      const listed = await readAppResource(own, "ui://fixture/listed.html");
      assert.deepEqual(listed.csp.connectDomains, ["https://listed.example.com"]);
      // The content's own declaration wins over the listing (the probe's entry declares none).
      const probe = await readAppResource(own, "ui://fixture/probe.html");
      assert.deepEqual(probe.csp.connectDomains, ["https://api.example.com"]);
    } finally {
      await own.close();
    }
  });
});
