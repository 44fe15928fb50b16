// Starts the example HTTP servers as child processes and describes the stdio ones, for tests,
// benchmarks and demos that need one server of every era and transport.
//
//   const fleet = await startFleet({ only: ["modern-2026-07-28", "legacy-stdio"] });
//   ...
//   await fleet.close();

import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const READY_TIMEOUT_MS = 15_000;
const TERM_GRACE_MS = 3_000;
const STDERR_TAIL_BYTES = 2_048;

/**
 * Where a server's code is: its source here, or a one-file bundle of it (the same code) in the folder
 * TETHER_FLEET_BUNDLES names, which starts in about half the CPU (scripts/bundle-servers.mjs; the
 * test suite uses them).
 */
const bundles = process.env.TETHER_FLEET_BUNDLES;
const bundled = (file) => (bundles && existsSync(join(bundles, file)) ? join(bundles, file) : undefined);
const serverFile = (file) => bundled(file) ?? fileURLToPath(new URL(`./servers/${file}`, import.meta.url));

const HTTP_SERVERS = [
  {
    name: "legacy-sse-2024-11-05",
    era: "legacy",
    version: "2024-11-05",
    transport: "sse",
    file: "legacy-sse.mjs",
    args: [],
  },
  {
    name: "streamable-2025-06-18",
    era: "legacy",
    version: "2025-06-18",
    transport: "streamable-http",
    file: "streamable-2025-06-18.mjs",
    args: [],
  },
  {
    name: "streamable-2025-11-25-sse",
    era: "legacy",
    version: "2025-11-25",
    transport: "streamable-http",
    file: "streamable-2025-11-25.mjs",
    args: [],
  },
  {
    name: "streamable-2025-11-25-json",
    era: "legacy",
    version: "2025-11-25",
    transport: "streamable-http",
    file: "streamable-2025-11-25.mjs",
    args: ["--json"],
  },
  {
    name: "modern-2026-07-28",
    era: "modern",
    version: "2026-07-28",
    transport: "streamable-http",
    file: "modern-2026-07-28.mjs",
    args: [],
  },
];

/** server-everything's entry as installed. */
function everythingSource() {
  const require = createRequire(import.meta.url);
  const pkg = require.resolve("@modelcontextprotocol/server-everything/package.json");
  return join(dirname(pkg), "dist", "index.js");
}

/**
 * The script a fleet server starts from, by file name (`legacy-stdio.mjs`, or `everything.mjs`
 * for server-everything): its bundle when there are bundles, else its source.
 */
export function serverPath(file) {
  return file === "everything.mjs" ? (bundled(file) ?? everythingSource()) : serverFile(file);
}

function stdioServers() {
  return [
    {
      name: "legacy-stdio",
      era: "legacy",
      version: "2025-11-25",
      command: process.execPath,
      args: [serverFile("legacy-stdio.mjs")],
    },
    {
      name: "modern-stdio",
      era: "modern",
      version: "2026-07-28",
      command: process.execPath,
      args: [serverFile("modern-stdio.mjs")],
    },
    {
      name: "everything-stdio",
      era: "legacy",
      version: "2025-11-25",
      command: process.execPath,
      args: [serverPath("everything.mjs"), "stdio"],
    },
  ];
}

/**
 * Spawns one server and resolves `{ child, url }` once it prints its ready line. Rejects after
 * READY_TIMEOUT_MS, or when the child exits first, naming the server and quoting its stderr tail.
 */
function startChild(spec) {
  // --exit-with-stdin: the child also dies when this process dies without running exit handlers.
  const child = spawn(process.execPath, [serverFile(spec.file), ...spec.args, "--exit-with-stdin"], {
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stderrTail = "";
  child.stderr.setEncoding("utf8").on("data", (chunk) => {
    stderrTail = (stderrTail + chunk).slice(-STDERR_TAIL_BYTES);
  });
  const exited = new Promise((resolve) => child.once("exit", resolve));
  const fail = (reason) =>
    new Error(`fleet: server ${spec.name} ${reason}${stderrTail ? `; stderr: ${stderrTail.trim()}` : ""}`);

  const ready = new Promise((resolve, reject) => {
    let stdout = "";
    const timer = setTimeout(() => {
      finish();
      reject(fail(`printed no ready line within ${READY_TIMEOUT_MS} ms`));
    }, READY_TIMEOUT_MS);
    const onData = (chunk) => {
      stdout += chunk;
      const newline = stdout.indexOf("\n");
      if (newline === -1) return;
      finish();
      try {
        const line = JSON.parse(stdout.slice(0, newline));
        if (line.ready !== true || typeof line.url !== "string") throw new Error("not a ready line");
        resolve(line.url);
      } catch {
        reject(fail(`printed an unexpected first line: ${stdout.slice(0, newline).slice(0, 200)}`));
      }
    };
    const onExit = (code, signal) => {
      finish();
      reject(fail(`exited before it was ready (code ${code}, signal ${signal})`));
    };
    const onError = (error) => {
      finish();
      reject(fail(`could not be spawned: ${error.message}`));
    };
    function finish() {
      clearTimeout(timer);
      child.stdout.off("data", onData);
      child.off("close", onExit);
      child.off("error", onError);
      // Keep draining so a chatty child never blocks on a full pipe.
      child.stdout.resume();
    }
    child.stdout.setEncoding("utf8").on("data", onData);
    // "close" rather than "exit": it waits for stderr to drain, so the error can quote it.
    child.once("close", onExit);
    child.once("error", onError);
  });
  return { child, exited, ready };
}

function stopChild({ child, exited }) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), TERM_GRACE_MS);
  return exited.finally(() => clearTimeout(timer));
}

/**
 * Starts the HTTP servers (all, or those named in `only`) and returns their URLs, the stdio
 * servers' command lines, and `close()`, which stops every child (SIGTERM, then SIGKILL after
 * TERM_GRACE_MS) and resolves once all have exited. `close()` is idempotent.
 */
export async function startFleet({ only } = {}) {
  const stdio = stdioServers();
  const known = new Set([...HTTP_SERVERS, ...stdio].map((spec) => spec.name));
  const unknown = (only ?? []).filter((name) => !known.has(name));
  if (unknown.length > 0) {
    throw new Error(
      `fleet: unknown server name(s) in only: ${unknown.join(", ")}; known: ${[...known].join(", ")}`,
    );
  }
  const wanted = (spec) => only === undefined || only.includes(spec.name);

  const specs = HTTP_SERVERS.filter(wanted);
  const children = specs.map(startChild);
  const killAll = () => {
    for (const { child } of children) child.kill("SIGKILL");
  };
  process.once("exit", killAll);

  let closing;
  const close = () => {
    closing ??= Promise.all(children.map(stopChild)).finally(() => process.off("exit", killAll));
    return closing;
  };

  const settled = await Promise.allSettled(children.map((started) => started.ready));
  const failure = settled.find((result) => result.status === "rejected");
  if (failure) {
    await close();
    throw failure.reason;
  }
  return {
    servers: specs.map(({ name, era, version, transport }, i) => ({
      name,
      era,
      version,
      transport,
      url: settled[i].value,
    })),
    stdio: stdio
      .filter(wanted)
      .map(({ name, era, version, command, args }) => ({ name, era, version, command, args })),
    close,
  };
}
