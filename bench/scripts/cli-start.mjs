// What a cold CLI command does before its server starts: runs the built CLI (and, beside it, the
// raw-pipes floor script) with a preloaded module that records, in that process only, the time
// since process start at which it first calls spawn and its CPU time at exit; medians over
// alternated runs. One more run of each, with a module resolve hook (which costs a thread of its
// own, so it is kept out of the timed runs), lists what it loads: every module it resolves, and
// the bytes of our bundle's files among them.
// For §2's first-stdout-byte row: a stdio server starts only once the client has spawned it, so
// everything loaded and run before the spawn is on that row's path.
//
//   node bench/scripts/cli-start.mjs [--runs=15] [--cli=dist/tether.mjs] -- CMD [ARGS...]
//
// The CLI runs `tools -- CMD ARGS...` with an empty TETHER_CACHE_DIR each time (cold).

import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const argv = process.argv.slice(2);
const split = argv.indexOf("--");
if (split === -1 || split === argv.length - 1) {
  process.stderr.write("usage: node bench/scripts/cli-start.mjs [--runs=N] [--cli=FILE] -- CMD [ARGS...]\n");
  process.exit(2);
}
const flags = argv.slice(0, split);
const server = argv.slice(split + 1);
const flag = (name, fallback) =>
  flags.find((f) => f.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
const runs = Number(flag("runs", "15"));
const cli = resolve(flag("cli", "dist/tether.mjs"));
const floor = fileURLToPath(new URL("./floor-stdio.mjs", import.meta.url));

const dir = mkdtempSync(join(tmpdir(), "tether-cli-start-"));
const hooks = join(dir, "hooks.mjs");
writeFileSync(
  hooks,
  `import { appendFileSync } from "node:fs";
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  appendFileSync(process.env.CLI_START_LOG, JSON.stringify({ module: resolved.url }) + "\\n");
  return resolved;
}
`,
);
const preload = join(dir, "preload.mjs");
writeFileSync(
  preload,
  `import { appendFileSync } from "node:fs";
import child from "node:child_process";
import { register, syncBuiltinESMExports } from "node:module";
if (process.argv[1] === process.env.CLI_START_MAIN) {
  const log = (entry) => appendFileSync(process.env.CLI_START_LOG, JSON.stringify(entry) + "\\n");
  if (process.env.CLI_START_MODULES) register(${JSON.stringify(pathToFileURL(hooks).href)});
  const spawn = child.spawn;
  let first = true;
  child.spawn = function (...args) {
    if (first) log({ spawnAtMs: performance.now() });
    first = false;
    return spawn.apply(this, args);
  };
  syncBuiltinESMExports();
  process.on("exit", () => {
    const u = process.cpuUsage();
    log({ cpuMs: (u.user + u.system) / 1000 });
  });
}
`,
);

const env = { ...process.env };
delete env.NODE_EXTRA_CA_CERTS;

function once(main, args, listModules = false) {
  const log = join(dir, "log.jsonl");
  writeFileSync(log, "");
  const cache = mkdtempSync(join(dir, "cache-"));
  const run = spawnSync(process.execPath, [main, ...args], {
    env: {
      ...env,
      NODE_OPTIONS: `--import ${pathToFileURL(preload).href}`,
      CLI_START_MAIN: main,
      ...(listModules ? { CLI_START_MODULES: "1" } : {}),
      CLI_START_LOG: log,
      TETHER_CACHE_DIR: cache,
    },
    stdio: ["ignore", "ignore", "pipe"],
  });
  if (run.status !== 0) throw new Error(`${main} exited ${run.status}: ${run.stderr}`);
  const entries = readFileSync(log, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l));
  const modules = [...new Set(entries.filter((e) => e.module).map((e) => e.module))];
  const ours = modules.filter(
    (m) => (m.startsWith("file:") && m.includes("/tether-chunks/")) || m === pathToFileURL(main).href,
  );
  return {
    spawnAtMs: entries.find((e) => e.spawnAtMs !== undefined)?.spawnAtMs ?? Number.NaN,
    cpuMs: entries.find((e) => e.cpuMs !== undefined)?.cpuMs ?? Number.NaN,
    modules: modules.length,
    bundleFiles: ours.length,
    bundleBytes: ours.reduce((n, m) => n + statSync(fileURLToPath(m)).size, 0),
  };
}

const median = (values) => {
  const s = [...values].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

try {
  const commands = { tether: [cli, ["tools", "--", ...server]], floor: [floor, server] };
  const results = { tether: [], floor: [] };
  for (let i = 0; i < runs; i++)
    for (const [name, [main, args]] of Object.entries(commands)) results[name].push(once(main, args));
  for (const [name, rs] of Object.entries(results)) {
    const [main, args] = commands[name];
    const loaded = once(main, args, true);
    process.stdout.write(
      `${name.padEnd(6)}  spawns the server at ${median(rs.map((r) => r.spawnAtMs)).toFixed(1)} ms, ` +
        `${median(rs.map((r) => r.cpuMs)).toFixed(1)} ms CPU (medians of ${runs}); resolves ${loaded.modules} modules` +
        (name === "tether"
          ? `, ${loaded.bundleFiles} bundle files of ${(loaded.bundleBytes / 1024).toFixed(0)} KiB`
          : "") +
        "\n",
    );
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
