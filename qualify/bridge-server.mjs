// Runs the official conformance suite's SERVER scenarios twice: against server-everything served
// over HTTP by `tether bridge --listen -- <server-everything stdio>`, and against server-everything's
// own Streamable HTTP mode. Prints both counts (checks passed and failed, and the scenarios that
// differ); exits 1 when the bridge passes fewer checks than the server's own HTTP mode.
//
//   node qualify/bridge-server.mjs
//
// Environment: TETHER_TEST_CLI (the CLI bundle; default dist/tether.mjs).
import { spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const conformance = join(root, "qualify", "conformance");
const node22 = join(conformance, "node_modules", ".bin", "node");
const suite = join(conformance, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js");
const cli = process.env.TETHER_TEST_CLI ?? join(root, "dist", "tether.mjs");
const require = createRequire(import.meta.url);
const everything = join(
  dirname(require.resolve("@modelcontextprotocol/server-everything/package.json")),
  "dist",
  "index.js",
);
const READY_MS = 30_000;

/** A free loopback port (server-everything takes its port from PORT, not 0). */
async function freePort() {
  const server = createServer();
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address();
  server.close();
  await once(server, "close");
  return port;
}

/** Spawns a child and resolves with it once a stdout line matches `ready` (which maps it to a URL). */
async function start(command, args, env, ready) {
  const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ["pipe", "pipe", "pipe"] });
  let out = "";
  let err = "";
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`not ready within ${READY_MS} ms: ${err}`)), READY_MS);
    const check = () => {
      const found = ready(out, err);
      if (found) {
        clearTimeout(timer);
        resolve(found);
      }
    };
    child.stdout.setEncoding("utf8").on("data", (d) => {
      out += d;
      check();
    });
    child.stderr.setEncoding("utf8").on("data", (d) => {
      err += d;
      check();
    });
    child.once("exit", (code) => reject(new Error(`exited (${code}) before it was ready: ${err}`)));
  });
  return { child, url };
}

function stop(child) {
  child.kill("SIGTERM");
  return once(child, "exit");
}

/** One run of the suite's active server scenarios against `url`: totals and per-scenario verdicts. */
function runSuite(url) {
  const r = spawnSync(node22, [suite, "server", "--url", url], { encoding: "utf8", timeout: 300_000 });
  const text = `${r.stdout}\n${r.stderr}`;
  const total = /Total: (\d+) passed, (\d+) failed/.exec(text);
  const scenarios = new Map();
  for (const m of text.matchAll(/^([✓✗]) (\S+): (\d+) passed, (\d+) failed/gm))
    scenarios.set(m[2], { ok: m[1] === "✓", passed: Number(m[3]), failed: Number(m[4]) });
  return { passed: total ? Number(total[1]) : 0, failed: total ? Number(total[2]) : 0, scenarios };
}

const port = await freePort();
const direct = await start(
  process.execPath,
  [everything, "streamableHttp"],
  { PORT: String(port) },
  (out, err) => (/listening on port/i.test(out + err) ? `http://127.0.0.1:${port}/mcp` : undefined),
);
const bridged = await start(
  process.execPath,
  [cli, "bridge", "--listen", "127.0.0.1:0", "--", process.execPath, everything, "stdio"],
  {},
  (out) => {
    const nl = out.indexOf("\n");
    return nl === -1 ? undefined : JSON.parse(out.slice(0, nl)).listening.mcp;
  },
);
let ours;
let theirs;
try {
  ours = runSuite(bridged.url);
  theirs = runSuite(direct.url);
} finally {
  await Promise.all([stop(direct.child), stop(bridged.child)]);
}

console.log(`tether bridge --listen -- server-everything: ${ours.passed} passed, ${ours.failed} failed`);
console.log(`server-everything streamableHttp:           ${theirs.passed} passed, ${theirs.failed} failed`);
for (const [name, mine] of ours.scenarios) {
  const other = theirs.scenarios.get(name);
  if (other && other.ok !== mine.ok)
    console.log(
      `  ${name}: ${mine.ok ? "passes" : "fails"} through the bridge, ${other.ok ? "passes" : "fails"} direct`,
    );
}
process.exitCode = ours.passed >= theirs.passed ? 0 : 1;
