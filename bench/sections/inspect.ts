// §8 The web explorer (`tether inspect`), beside the figures issue 32 measured for Inspector 2.12
// on this kind of machine (its URL 0.86 s after launch; the first tool 3.3 s after the page
// opens, after two clicks; 722 KB of JavaScript gzipped and a font CDN; an echo call from its
// page ~150 ms against ~2 ms for the SDK client directly):
//
// - launch to the first tool visible with no click: the built CLI started on server-everything
//   over stdio, timed to its URL on stdout, then a fresh browser context (Debian's Chromium,
//   headless, started once) opens the URL and waits for the first tool's button;
// - the page's size: the page, its script and its stylesheet as served, gzipped, and every
//   request the browser made while the page loaded (none may leave the explorer's origin);
// - the added time of a call from the page's API: `POST /api/call` (what the page sends, with
//   the launch token) against the library's own `callTool` on its own connection to the same
//   server, alternated, sequential echo calls.

import { spawn } from "node:child_process";
import { request } from "node:http";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { chromium } from "playwright-core";
import { lib } from "../lib/library.ts";
import type { Row } from "../lib/report.ts";
import { summarize } from "../lib/stats.ts";

const root = (p: string) => fileURLToPath(new URL(`../../${p}`, import.meta.url));
const BIN = process.env.TETHER_BENCH_CLI ?? root("dist/tether.mjs");
const EVERYTHING = fileURLToPath(
  import.meta.resolve("@modelcontextprotocol/server-everything/dist/index.js"),
);
const CHROMIUM = process.env.TETHER_CHROMIUM ?? "/usr/bin/chromium";

export interface InspectConfig {
  launches: number;
  calls: number;
}

interface Launched {
  url: string;
  /** ms from spawn to the URL's line on stdout. */
  urlMs: number;
  stop(): Promise<void>;
}

async function launch(): Promise<Launched> {
  const started = performance.now();
  const child = spawn(
    process.execPath,
    [BIN, "inspect", "--no-open", "--", process.execPath, EVERYTHING, "stdio"],
    {
      stdio: ["ignore", "pipe", "inherit"],
      env: { ...process.env, TETHER_NO_BROWSER: "1" },
    },
  );
  const exited = new Promise<void>((resolve) => child.once("close", () => resolve()));
  let out = "";
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString("utf8");
      if (out.includes("\n")) resolve(out.slice(0, out.indexOf("\n")));
    });
    child.once("close", () => reject(new Error("bench: tether inspect exited before its URL")));
  });
  return {
    url,
    urlMs: performance.now() - started,
    async stop() {
      child.kill("SIGINT");
      await exited;
    },
  };
}

/** GET with the cookie, returning the body as it was sent. */
function fetchRaw(base: string, path: string, cookie: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const url = new URL(path, base);
    request({ host: url.hostname, port: url.port, path: url.pathname, headers: { cookie } }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve(Buffer.concat(chunks)));
      res.on("error", reject);
    })
      .on("error", reject)
      .end();
  });
}

export async function inspectSection(cfg: InspectConfig): Promise<Row[]> {
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: process.getuid?.() === 0 ? ["--no-sandbox"] : [],
  });
  const rows: Row[] = [];
  try {
    // Launch to the first tool, no click.
    const urlMs: number[] = [];
    const toolMs: number[] = [];
    let gzipped = 0;
    let raw = 0;
    let foreign: string[] = [];
    let requests = 0;
    for (let i = 0; i < cfg.launches + 1; i++) {
      const run = await launch();
      const context = await browser.newContext();
      const page = await context.newPage();
      const origin = new URL(run.url).origin;
      const seen: string[] = [];
      page.on("request", (r) => seen.push(r.url()));
      try {
        const t = performance.now();
        await page.goto(run.url);
        await page
          .getByRole("button", { name: /^echo\b/ })
          .first()
          .waitFor({ state: "visible", timeout: 30_000 });
        const ms = performance.now() - t;
        // The first launch warms the file cache and is not counted.
        if (i > 0) {
          urlMs.push(run.urlMs);
          toolMs.push(ms);
        }
        if (i === 1) {
          const cookies = await context.cookies();
          const cookie = cookies.map((c) => `${c.name}=${c.value}`).join("; ");
          const parts = await Promise.all(
            ["/", "/page.js", "/page.css"].map((p) => fetchRaw(origin, p, cookie)),
          );
          gzipped = parts.reduce((n, b) => n + gzipSync(b).length, 0);
          raw = parts.reduce((n, b) => n + b.length, 0);
          requests = seen.length;
          foreign = seen.filter(
            (u) => !u.startsWith(`${origin}/`) && !u.startsWith("data:") && !u.startsWith("blob:"),
          );
        }
      } finally {
        await context.close();
        await run.stop();
      }
    }
    const tool = summarize(toolMs);
    rows.push({
      section: "8",
      case: "tether inspect -- server-everything: URL printed → first tool visible, no click",
      unit: "ms",
      ours: tool,
      official: { label: "Inspector 2.12 (issue 32): 3.3 s after two clicks", summary: summarize([3300]) },
      ratio: tool.median / 3300,
      target: { text: "≤ 1000 ms after the URL", met: tool.median <= 1000 },
      note: `launch → URL printed: median ${summarize(urlMs).median.toFixed(0)} ms (Inspector 2.12: 860 ms); ${cfg.launches} launches, a fresh browser context each`,
    });
    rows.push({
      section: "8",
      case: "the explorer's page (page, script, stylesheet) gzipped",
      unit: "KiB",
      ours: summarize([gzipped / 1024]),
      official: {
        label: "Inspector 2.12 (issue 32): 722 KB of JavaScript gzipped + a font CDN",
        summary: summarize([722_000 / 1024]),
      },
      ratio: gzipped / 722_000,
      target: {
        text: "≤ 60 KiB, nothing from another origin",
        met: gzipped <= 60 * 1024 && foreign.length === 0,
      },
      note: `${(raw / 1024).toFixed(1)} KiB as sent; ${requests} requests while it loaded, ${foreign.length} to another origin${foreign.length ? ` (${foreign.join(", ")})` : ""}`,
    });

    // A call from the page's API against the library's own call.
    const run = await launch();
    const client = await lib.connect({ command: process.execPath, args: [EVERYTHING, "stdio"] });
    try {
      const origin = new URL(run.url).origin;
      const token = new URL(run.url).searchParams.get("token")!;
      const apiCall = async (i: number) => {
        const t = performance.now();
        const res = await fetch(`${origin}/api/call`, {
          method: "POST",
          headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
          body: JSON.stringify({ server: "s1", tool: "echo", args: { message: "hi" }, callId: `b${i}` }),
        });
        const doc = (await res.json()) as { ok: boolean };
        if (!doc.ok) throw new Error(`bench: the explorer's call failed: ${JSON.stringify(doc)}`);
        return performance.now() - t;
      };
      const libCall = async () => {
        const t = performance.now();
        await client.callTool("echo", { message: "hi" });
        return performance.now() - t;
      };
      for (let i = 0; i < 20; i++) {
        await apiCall(-i - 1);
        await libCall();
      }
      const api: number[] = [];
      const own: number[] = [];
      for (let i = 0; i < cfg.calls; i++) {
        api.push(await apiCall(i));
        own.push(await libCall());
      }
      const ours = summarize(api);
      const theirs = summarize(own);
      const added = ours.median - theirs.median;
      rows.push({
        section: "8",
        case: `echo from the explorer's API vs the library's own call, ${cfg.calls} sequential each (stdio)`,
        unit: "ms",
        ours,
        official: { label: "the library's own callTool", summary: theirs },
        ratio: ours.median / theirs.median,
        target: { text: "≤ 5 ms added", met: added <= 5 },
        note: `added ${added.toFixed(2)} ms per call; Inspector 2.12 (issue 32): ~150 ms from its page against ~2 ms for the SDK client`,
      });
    } finally {
      await client.close();
      await run.stop();
    }
  } finally {
    await browser.close();
  }
  return rows;
}
