// Runs a small TypeScript/ESM script in a child Node process and asserts it exits by itself: the
// check behind CONTRACT C9 that nothing of ours keeps a process alive after close().
//
// The script is bundled with esbuild, together with the library source it imports, into one plain
// JavaScript file that the child runs without a TypeScript loader. tsx would compile the same
// source with the same esbuild, but one module at a time in every child (about a second of CPU
// each) and with a helper process of its own in the child's group; one bundle per script, made
// once per test process, costs a few tens of milliseconds.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { build, type Plugin } from "esbuild";
import { outputOf } from "./toolkit.ts";

/** The library entry as a file URL, for inline scripts that live outside the repository. */
export const LIBRARY_URL = pathToFileURL(fileURLToPath(new URL("../../src/index.ts", import.meta.url))).href;

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
/**
 * Bundles live under the repository's node_modules, so the packages the library imports (kept
 * external, as under tsx) resolve to the same installed copies.
 */
const BUNDLE_ROOT = join(ROOT, "node_modules", ".cache", "tether-child-scripts");

/**
 * The meta-URL expression, spelled so that a bundler which rewrites it (as scripts/test-run.mjs does
 * for this file) leaves this text alone.
 */
const META_URL = ["import", "meta", "url"].join(".");

/** Inline scripts import the library by file URL; every module keeps its own meta URL. */
const sourceAsWritten: Plugin = {
  name: "source-as-written",
  setup(b) {
    b.onResolve({ filter: /^file:\/\// }, (a) => ({ path: fileURLToPath(a.path) }));
    b.onLoad({ filter: /\.[cm]?[tj]s$/ }, async (a) => {
      if (a.path.includes(`${"/"}node_modules${"/"}`)) return undefined;
      const text = await readFile(a.path, "utf8");
      return {
        contents: text.replaceAll(META_URL, JSON.stringify(pathToFileURL(a.path).href)),
        loader: /\.[cm]?ts$/.test(a.path) ? "ts" : "js",
      };
    });
  },
};

/** One bundle per script file per test process. */
const bundles = new Map<string, Promise<string>>();
/** The folders of this process's bundles, removed when it exits. */
const bundleDirs = new Set<string>();
process.once("exit", () => {
  for (const d of bundleDirs) rmSync(d, { recursive: true, force: true });
});

/**
 * The script file bundled with the library source it imports, as plain JavaScript for
 * `node FILE` (no TypeScript loader); made once per test process.
 */
export function bundled(file: string): Promise<string> {
  let out = bundles.get(file);
  if (!out) {
    out = (async () => {
      await mkdir(BUNDLE_ROOT, { recursive: true });
      const dir = await mkdtemp(join(BUNDLE_ROOT, "s-"));
      bundleDirs.add(dir);
      const outfile = join(dir, "script.mjs");
      await build({
        entryPoints: [file],
        outfile,
        bundle: true,
        platform: "node",
        format: "esm",
        target: "node20",
        packages: "external",
        sourcemap: "inline",
        logLevel: "silent",
        plugins: [sourceAsWritten],
      });
      return outfile;
    })();
    bundles.set(file, out);
  }
  return out;
}

/** After the child exits, how long its process group may take to empty before we call it a leak. */
const GROUP_DRAIN_MS = 1_500;
/** How long we wait for the child's pipes to close after it exited (output only; never a failure). */
const OUTPUT_DRAIN_MS = 1_000;
const OUTPUT_TAIL_CHARS = 4_000;

export interface ChildExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** From spawn to exit. */
  elapsedMs: number;
}

export interface RunChildOptions {
  /** A script file to run (absolute path), or... */
  file?: string;
  /** ...inline ESM/TypeScript source, written to a temporary `.mts` file. Import the library from LIBRARY_URL. */
  source?: string;
  /** Extra environment for the child, on top of ours. */
  env?: Record<string, string>;
  /** The child must exit by itself within this many ms (default 10000). */
  exitWithinMs?: number;
  /** Fail if any process the child started (e.g. a stdio server) is still alive after it exited (default true). */
  checkNoOrphans?: boolean;
}

const tail = (text: string) =>
  text.length > OUTPUT_TAIL_CHARS ? `…${text.slice(-OUTPUT_TAIL_CHARS)}` : text;

/**
 * Processes of the group that are still running. Zombies are left out: an exited process whose
 * parent is gone waits for init to reap it, holds nothing, and is not a leak (tsx's esbuild helper
 * often ends up that way for a moment). Reads /proc where there is one, else asks the kernel.
 */
function liveGroupMembers(pgid: number): string[] {
  if (existsSync("/proc/self/stat")) {
    const live: string[] = [];
    for (const entry of readdirSync("/proc")) {
      if (!/^\d+$/.test(entry)) continue;
      let stat: string;
      try {
        stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      } catch {
        continue;
      }
      // pid (comm) state ppid pgrp ...; comm may contain spaces and parentheses.
      const close = stat.lastIndexOf(")");
      const [state, , pgrp] = stat.slice(close + 2).split(" ");
      if (Number(pgrp) === pgid && state !== "Z" && state !== "X") {
        live.push(`${entry} ${stat.slice(stat.indexOf("(") + 1, close)} (${state})`);
      }
    }
    return live;
  }
  try {
    process.kill(-pgid, 0);
    return [`process group ${pgid}`];
  } catch {
    return [];
  }
}

function killGroup(pgid: number): void {
  try {
    process.kill(-pgid, "SIGKILL");
  } catch {
    // Already gone.
  }
}

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Runs the script (bundled, see above) with `process.execPath` in its own process group, and
 * resolves with its exit code and output once it exits. If it has not exited within `exitWithinMs`, the whole
 * group is killed and the returned promise rejects with an AssertionError quoting the output tail.
 * With `checkNoOrphans`, a process left behind in its group (a server it spawned) also fails.
 */
export async function runChildToExit(options: RunChildOptions): Promise<ChildExit> {
  const exitWithinMs = options.exitWithinMs ?? 10_000;
  let dir: string | undefined;
  let file = options.file;
  if (options.source !== undefined) {
    dir = await mkdtemp(join(tmpdir(), "tether-child-"));
    file = join(dir, "script.mts");
    await writeFile(file, options.source);
  }
  if (file === undefined) throw new Error("runChildToExit: give file or source");
  let script: string | undefined;
  try {
    script = await bundled(file);
    const started = performance.now();
    const child = spawn(process.execPath, ["--enable-source-maps", script], {
      env: { ...process.env, ...options.env },
      stdio: ["ignore", "pipe", "pipe"],
      // Its own process group: a timeout kills everything it started, and leftovers are detectable.
      detached: true,
    });
    const pgid = child.pid;
    if (pgid === undefined) throw new Error("runChildToExit: the child could not be spawned");
    const output = outputOf(child);
    const closed = new Promise<void>((resolve) => child.once("close", () => resolve()));

    const exit = await new Promise<{ code: number | null; signal: NodeJS.Signals | null } | undefined>(
      (resolve) => {
        const timer = setTimeout(() => resolve(undefined), exitWithinMs);
        child.once("exit", (code, signal) => {
          clearTimeout(timer);
          resolve({ code, signal });
        });
      },
    );
    const elapsedMs = performance.now() - started;
    if (!exit) {
      killGroup(pgid);
      await Promise.race([closed, delay(OUTPUT_DRAIN_MS)]);
      assert.fail(
        `the child did not exit by itself within ${exitWithinMs} ms (killed)\n` +
          `--- stdout ---\n${tail(output.stdout)}\n--- stderr ---\n${tail(output.stderr)}`,
      );
    }
    await Promise.race([closed, delay(OUTPUT_DRAIN_MS)]);

    if (options.checkNoOrphans ?? true) {
      const until = performance.now() + GROUP_DRAIN_MS;
      let leftovers = liveGroupMembers(pgid);
      while (leftovers.length > 0 && performance.now() < until) {
        await delay(50);
        leftovers = liveGroupMembers(pgid);
      }
      if (leftovers.length > 0) {
        killGroup(pgid);
        assert.fail(
          `the child exited but left a process of its group running for ${GROUP_DRAIN_MS} ms (killed)\n` +
            `--- left running ---\n${leftovers.join("\n")}\n` +
            `--- stdout ---\n${tail(output.stdout)}\n--- stderr ---\n${tail(output.stderr)}`,
        );
      }
    }
    const { stdout, stderr } = output;
    return { code: exit.code, signal: exit.signal, stdout, stderr, elapsedMs };
  } finally {
    if (dir) {
      // An inline script's bundle is used once: it goes with the script's folder.
      bundles.delete(file);
      await rm(dir, { recursive: true, force: true });
      if (script) await rm(dirname(script), { recursive: true, force: true });
    }
  }
}
