// The CLI prints a result as soon as it is known, then closes: a reader of stdout does not wait
// for a slow server's shutdown, and the process still exits only once the server is gone.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { CLI_BIN } from "../helpers/cli.ts";
import { ECHO_TOOL } from "../helpers/hostile.ts";

/**
 * A legacy stdio server that does not exit when its stdin ends: only SIGTERM (our close, after
 * its stdin grace) ends it, and it writes `exited` as it goes. It writes its pid at start.
 */
function slowExitServer(dir: string): string {
  const file = join(dir, "server.mjs");
  writeFileSync(
    file,
    `
import { writeFileSync } from "node:fs";
import { createInterface } from "node:readline";
const dir = ${JSON.stringify(dir)};
writeFileSync(dir + "/pid", String(process.pid));
const send = (m) => process.stdout.write(JSON.stringify(m) + "\\n");
createInterface({ input: process.stdin }).on("line", (line) => {
  const m = JSON.parse(line);
  if (m.id === undefined) return;
  if (m.method === "initialize")
    send({ jsonrpc: "2.0", id: m.id, result: { protocolVersion: "2025-11-25", capabilities: { tools: {} }, serverInfo: { name: "slow-exit", version: "0" } } });
  else if (m.method === "tools/list") send({ jsonrpc: "2.0", id: m.id, result: { tools: [${JSON.stringify(ECHO_TOOL)}] } });
  else send({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "Method not found" } });
});
// Stays up after stdin ends (a keep-alive timer), as slow servers do; SIGTERM ends it.
const keepAlive = setInterval(() => {}, 1000);
process.on("SIGTERM", () => {
  clearInterval(keepAlive);
  writeFileSync(dir + "/exited", "yes");
  process.exit(0);
});
`,
  );
  return file;
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

test("K1 C5: tools prints its result while the server is still up, and exits only after the server is gone", async () => {
  const dir = mkdtempSync(join(tmpdir(), "tether-early-output-"));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const server = slowExitServer(dir);
  const child = spawn(process.execPath, [CLI_BIN, "tools", "--json", "--", process.execPath, server], {
    env: { ...process.env, NO_COLOR: "1", TETHER_CACHE_DIR: join(dir, "cache") },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stderr.on("data", (d) => {
    stderr += d;
  });
  const atFirstByte = new Promise<{ serverUp: boolean; exitedMarker: boolean }>((resolve) => {
    child.stdout.once("data", () => {
      const pid = Number(readFileSync(join(dir, "pid"), "utf8"));
      resolve({ serverUp: alive(pid), exitedMarker: existsSync(join(dir, "exited")) });
    });
  });
  child.stdout.on("data", (d) => {
    stdout += d;
  });
  const code = await new Promise<number | null>((resolve) => child.once("close", resolve));
  const first = await atFirstByte;
  assert.equal(code, 0, stderr);
  assert.deepEqual(
    first,
    { serverUp: true, exitedMarker: false },
    "the result reached stdout before the server began to exit",
  );
  assert.deepEqual(
    (JSON.parse(stdout) as { tools: { name: string }[] }).tools.map((t) => t.name),
    ["echo"],
  );
  // The CLI's exit came after the server's graceful one (SIGTERM after the stdin grace), not before.
  assert.ok(existsSync(join(dir, "exited")), "the server was shut down gracefully before the CLI exited");
  assert.equal(alive(Number(readFileSync(join(dir, "pid"), "utf8"))), false, "no orphan");
});
