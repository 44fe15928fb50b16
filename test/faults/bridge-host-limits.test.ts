// The bridge's edges toward its host (CONTRACT K1, S6): a body over the --listen bound is answered
// 413 that the host can read (not a reset), however the host sends it, with memory bounded; and a
// signal ends the bridge the way it ends every command: one `cancelled` record, exit 130, and the
// target's process tree gone.

import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { request } from "node:http";
import { after, before, describe, test } from "node:test";
import { type Listener, RawHost, SCRIPTED_SERVER, startListener } from "../helpers/bridge.ts";
import { eventually } from "../helpers/deadline-servers.ts";
import { running } from "../helpers/process-tree.ts";

const BODY_BYTES = 50 * 1024 * 1024;
const HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" };

/** Peak resident memory of a process, in bytes (Linux). */
function peakRss(pid: number): number | undefined {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

/**
 * POSTs a body of `bytes` the way most HTTP clients do: the whole body is written before the
 * response is read. Resolves with the status, or the error the host met.
 */
function post(url: string, bytes: number, declared: boolean): Promise<number | string> {
  return new Promise((resolve) => {
    const req = request(url, {
      method: "POST",
      headers: { ...HEADERS, ...(declared ? { "content-length": String(bytes) } : {}) },
    });
    req.on("response", (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on("error", (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
    const chunk = Buffer.alloc(1024 * 1024, 0x20);
    let left = bytes;
    const write = () => {
      while (left > 0) {
        const n = Math.min(left, chunk.length);
        left -= n;
        if (!req.write(n === chunk.length ? chunk : chunk.subarray(0, n)))
          return void req.once("drain", write);
      }
      req.end();
    };
    write();
  });
}

describe("the --listen body bound", () => {
  let listener: Listener;
  before(async () => {
    listener = await startListener("127.0.0.1:0", ["--", process.execPath, SCRIPTED_SERVER]);
  });
  after(async () => {
    await listener?.stop();
  });

  test("K1: a 50 MB POST is answered 413 every time, declared or chunked, and the listener's memory stays bounded", async () => {
    const before = peakRss(listener.child.pid!);
    for (const declared of [true, false, true, false])
      assert.equal(await post(listener.mcp, BODY_BYTES, declared), 413, `declared length: ${declared}`);
    const peak = peakRss(listener.child.pid!);
    if (before !== undefined && peak !== undefined)
      assert.ok(
        peak - before < 24 * 1024 * 1024,
        `the body was not held: peak grew by ${peak - before} bytes`,
      );
    // The listener is still serving.
    const ping = await fetch(listener.mcp, {
      method: "POST",
      headers: HEADERS,
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
    });
    assert.notEqual(ping.status, 413);
  });

  test("K1: Python's urllib, which sends the whole body before reading, reads the 413", (t) => {
    const python = spawnSync("python3", ["--version"]);
    if (python.status !== 0) return t.skip("python3 is not installed here");
    const script = [
      "import sys, urllib.request, urllib.error",
      `req = urllib.request.Request(sys.argv[1], data=b" " * ${BODY_BYTES}, headers={"Content-Type": "application/json", "Accept": "application/json, text/event-stream"})`,
      "try:",
      "    urllib.request.urlopen(req, timeout=60)",
      "    print('no error')",
      "except urllib.error.HTTPError as e:",
      "    print(e.code)",
      "except Exception as e:",
      "    print(type(e).__name__)",
    ].join("\n");
    return new Promise<void>((resolve, reject) => {
      const child = spawn("python3", ["-c", script, listener.mcp], { stdio: ["ignore", "pipe", "inherit"] });
      let out = "";
      child.stdout.on("data", (d) => {
        out += d;
      });
      child.on("close", () => {
        try {
          assert.equal(out.trim(), "413");
          resolve();
        } catch (e) {
          reject(e);
        }
      });
    });
  });
});

describe("a signal ends the bridge as it ends every command", () => {
  test("K1: SIGTERM ends a stdio bridge with one cancelled record and exit 130; S6: its server's tree is gone", async () => {
    const host = new RawHost(["--", process.execPath, SCRIPTED_SERVER]);
    await host.initialize();
    const pidReply = await host.request(2, "tools/call", { name: "pid", arguments: {} });
    const pid = Number((pidReply.result as { content: { text: string }[] }).content[0]!.text);
    assert.ok(running(pid));
    host.child.kill("SIGTERM");
    assert.equal(await host.exited, 130);
    const lines = host.stderr.trim().split("\n");
    assert.equal(lines.length, 1, host.stderr);
    const record = JSON.parse(lines[0]!) as Record<string, unknown>;
    assert.equal(record.code, "cancelled");
    assert.ok(await eventually(() => !running(pid), 10_000), "the server process is gone");
  });

  test("K1: SIGTERM ends a --listen bridge with one cancelled record and exit 130", async () => {
    const listener = await startListener("127.0.0.1:0", ["--", process.execPath, SCRIPTED_SERVER]);
    assert.equal(await listener.stop(), 130);
    const lines = listener.stderr().trim().split("\n");
    assert.equal(lines.length, 1, listener.stderr());
    assert.equal((JSON.parse(lines[0]!) as Record<string, unknown>).code, "cancelled");
  });

  test("K1: the host closing stdin still ends the bridge with exit 0 and nothing on stderr", async () => {
    const host = new RawHost(["--", process.execPath, SCRIPTED_SERVER]);
    await host.initialize();
    assert.equal(await host.end(), 0);
    assert.equal(host.stderr, "");
  });
});
