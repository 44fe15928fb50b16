// The web explorer (`tether inspect`) under test: the built CLI started in its own process group,
// its URL read from the first line it prints, and a real Chromium (Debian's, driven by
// playwright-core: no browser download) for the page. Screenshots go to .test-artifacts/inspect/.

import { mkdirSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";
import { type RunningCli, startCli } from "./process-tree.ts";

export const CHROMIUM = process.env.TETHER_CHROMIUM ?? "/usr/bin/chromium";
export const ARTIFACTS = join(process.cwd(), ".test-artifacts", "inspect");

export interface ExplorerRun {
  cli: RunningCli;
  /** The printed URL, token included. */
  url: string;
  /** `http://127.0.0.1:PORT` */
  base: string;
  host: string;
  token: string;
  /** The first line and anything after it on stdout. */
  stdout: () => string;
  /** Sends SIGINT and resolves with the CLI's exit. */
  stop(): Promise<Awaited<RunningCli["exited"]>>;
}

/** Starts `tether inspect --no-open ARGS` and resolves once its URL is printed. */
export async function startExplorer(args: string[], env: Record<string, string> = {}): Promise<ExplorerRun> {
  const cli = startCli(["inspect", "--no-open", ...args], {
    env: { TETHER_NO_BROWSER: "1", ...env },
    killAfterMs: 600_000,
  });
  let out = "";
  const url = await new Promise<string>((resolve, reject) => {
    cli.child.stdout!.on("data", (chunk: Buffer) => {
      out += chunk.toString("utf8");
      const nl = out.indexOf("\n");
      if (nl >= 0) resolve(out.slice(0, nl));
    });
    void cli.exited.then((exit) => reject(new Error(`tether inspect exited before its URL: ${exit.stderr}`)));
  });
  const parsed = new URL(url);
  return {
    cli,
    url,
    base: parsed.origin,
    host: parsed.host,
    token: parsed.searchParams.get("token") ?? "",
    stdout: () => out,
    async stop() {
      cli.signal("SIGINT");
      return cli.exited;
    },
  };
}

/** Chromium, headless; without the sandbox when running as root (containers). */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: process.getuid?.() === 0 ? ["--no-sandbox"] : [],
  });
}

/** Collects the page's console errors and uncaught exceptions. */
export function consoleErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on("console", (m) => {
    if (m.type() === "error") errors.push(m.text());
  });
  page.on("pageerror", (e) => errors.push(e.message));
  return errors;
}

/** A screenshot of the page as a test artifact. */
export async function shot(page: Page, name: string): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`) });
}

export interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One request with exactly the headers given (Host included), the way a hostile page or process sends it. */
export function raw(
  base: string,
  path: string,
  options: { method?: string; headers?: Record<string, string>; body?: string | Buffer } = {},
): Promise<RawAnswer> {
  const target = new URL(path, base);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname + target.search,
        method: options.method ?? "GET",
        headers: options.headers,
        setHost: options.headers?.host === undefined,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString("utf8"),
          }),
        );
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(options.body);
  });
}

/** A POST to the API with the launch token as a bearer token. */
export async function api(
  run: ExplorerRun,
  op: string,
  body: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const res = await fetch(`${run.base}/api/${op}`, {
    method: "POST",
    headers: { authorization: `Bearer ${run.token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return (await res.json()) as Record<string, unknown>;
}
