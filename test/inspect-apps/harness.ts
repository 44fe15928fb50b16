// A minimal host page for the MCP Apps module, standing in for the explorer: a loopback HTTP
// server with a tether client to one MCP server, its own page (the page half of the apps module,
// bundled by esbuild, under a CSP like the explorer's), and two routes: `/open` reads a tool's app
// through src/inspect/apps and publishes it on the apps listener, then calls the tool; `/call`
// calls a tool for the app. The page keeps a canary global that no app may read, and records
// every activity the module reports in `window.appActivity`.

import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import type { Page } from "playwright-core";
import type { Client } from "../../src/client/api.ts";
import type { ConnectOptions } from "../../src/index.ts";
import { connect } from "../../src/index.ts";
import { AppFrames } from "../../src/inspect/apps/frames.ts";
import { appResourceUri, readAppResource } from "../../src/inspect/apps/resource.ts";

const here = dirname(fileURLToPath(import.meta.url));
export const root = resolve(here, "../..");
export const APPS_FIXTURE = join(root, "test/fixtures/apps/apps-server.mjs");
export const BASIC_VANILLAJS = join(
  root,
  "node_modules/@modelcontextprotocol/server-basic-vanillajs/dist/index.js",
);
/** Where screenshots go (gitignored). */
export const ARTIFACTS = join(root, ".test-artifacts/apps");

export interface Harness {
  origin: string;
  frames: AppFrames;
  client: Client;
  /** The canary the page holds; an app that reads it would report it. */
  canary: string;
  close(): Promise<void>;
}

async function pageScript(): Promise<string> {
  const out = await build({
    entryPoints: [join(here, "harness-page.ts")],
    bundle: true,
    write: false,
    format: "esm",
    platform: "browser",
    target: "chrome120",
    logLevel: "warning",
  });
  return out.outputFiles[0]!.text;
}

async function body(req: IncomingMessage): Promise<Record<string, unknown>> {
  let text = "";
  for await (const chunk of req) {
    text += chunk;
    if (text.length > 1_000_000) throw new Error("body too large");
  }
  return JSON.parse(text) as Record<string, unknown>;
}

/** Starts the harness in front of one stdio server. */
export async function startHarness(
  target: Partial<Pick<ConnectOptions, "extensions">> & {
    args: string[];
    env?: Record<string, string>;
  },
): Promise<Harness> {
  const script = await pageScript();
  const canary = `canary-${randomBytes(8).toString("hex")}`;
  const client = await connect({ command: process.execPath, timeoutMs: 20_000, ...target } as ConnectOptions);
  const server: Server = createServer();
  const sockets = new Set<Socket>();
  server.on("connection", (s) => {
    sockets.add(s);
    s.once("close", () => sockets.delete(s));
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const frames = await AppFrames.listen({ frameAncestor: origin });
  const csp = `default-src 'none'; script-src 'self'; connect-src 'self'; frame-src ${frames.origin}; frame-ancestors 'none'`;

  const json = (res: ServerResponse, status: number, value: unknown): void => {
    res.writeHead(status, { "content-type": "application/json", "content-security-policy": csp });
    res.end(JSON.stringify(value));
  };
  server.on("request", (req: IncomingMessage, res: ServerResponse) => {
    void (async () => {
      try {
        if (req.method === "GET" && req.url === "/") {
          res.writeHead(200, { "content-type": "text/html; charset=utf-8", "content-security-policy": csp });
          res.end(
            `<!doctype html><html><head><meta charset="utf-8"><title>apps harness</title></head>` +
              `<body data-canary="${canary}"><h1>apps harness</h1><div id="app"></div><script type="module" src="/page.js"></script></body></html>`,
          );
        } else if (req.method === "GET" && req.url === "/page.js") {
          res.writeHead(200, { "content-type": "text/javascript", "content-security-policy": csp });
          res.end(script);
        } else if (req.method === "GET" && req.url === "/landing") {
          res.writeHead(200, { "content-type": "text/html" });
          res.end("<!doctype html><title>landing</title><p>landed</p>");
        } else if (req.method === "POST" && req.url === "/open") {
          const { tool: name, input } = await body(req);
          const tools = await client.listTools();
          const tool = tools.find((t) => t.name === name);
          const uri = tool && appResourceUri(tool);
          if (!tool || !uri) return json(res, 404, { error: `no app for ${String(name)}` });
          const app = await readAppResource(client, uri);
          const published = frames.publish(app.html, app.csp);
          const result = client.redact(await client.callTool(tool.name, (input ?? {}) as never));
          json(res, 200, {
            ...published,
            approved: app.csp,
            refused: app.refused,
            tool,
            tools,
            input,
            result,
          });
        } else if (req.method === "POST" && req.url === "/call") {
          const { name, arguments: args } = await body(req);
          json(res, 200, client.redact(await client.callTool(String(name), (args ?? {}) as never)));
        } else json(res, 404, { error: "not found" });
      } catch (e) {
        json(res, 500, { error: e instanceof Error ? e.message : String(e) });
      }
    })();
  });
  return {
    origin,
    frames,
    client,
    canary,
    async close() {
      await frames.close();
      await new Promise<void>((done) => {
        server.close(() => done());
        for (const s of sockets) s.destroy();
      });
      await client.close();
    },
  };
}

/** Opens the harness page and mounts the app of `tool`; the response to `/open`. */
export async function openApp(
  page: Page,
  harness: Harness,
  tool: string,
  input: Record<string, unknown> = {},
): Promise<{ url: string; csp: string; refused: string[] }> {
  await page.goto(`${harness.origin}/`);
  await page.waitForFunction(
    () => typeof (globalThis as unknown as { openApp?: unknown }).openApp === "function",
  );
  return page.evaluate(
    ([t, i]) => (globalThis as unknown as { openApp(t: string, i: unknown): Promise<never> }).openApp(t, i),
    [tool, input] as const,
  );
}

/** The activities the page recorded so far. */
export function activities(page: Page): Promise<Array<Record<string, unknown>>> {
  return page.evaluate(
    () => (globalThis as unknown as { appActivity: Array<Record<string, unknown>> }).appActivity,
  );
}

type Activity = { kind: string; data?: Record<string, unknown> };

/** Waits for the app's log message whose data has `key` (equal to `value` when given); its data. */
export async function waitForLog(page: Page, key: string, value?: unknown): Promise<Record<string, unknown>> {
  const handle = await page.waitForFunction(
    ([k, v]) =>
      (globalThis as unknown as { appActivity: Activity[] }).appActivity.find(
        (a) =>
          a.kind === "log" &&
          a.data !== null &&
          typeof a.data === "object" &&
          k in a.data &&
          (v === undefined || a.data[k] === v),
      )?.data,
    [key, value] as const,
  );
  return (await handle.jsonValue()) as Record<string, unknown>;
}

/** Waits for an activity of this kind; the first. */
export async function waitForActivity(page: Page, kind: string): Promise<Record<string, unknown>> {
  const handle = await page.waitForFunction(
    (k) => (globalThis as unknown as { appActivity: Activity[] }).appActivity.find((a) => a.kind === k),
    kind,
  );
  return (await handle.jsonValue()) as Record<string, unknown>;
}
