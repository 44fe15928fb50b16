// What every example HTTP server shares: argv, the ready line, body reading and shutdown.

import { createServer } from "node:http";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { setTimeout } from "node:timers/promises";

const MAX_BODY_BYTES = 4 * 1024 * 1024;
// How long shutdown lets sessions close gracefully before dropping their connections.
const SHUTDOWN_GRACE_MS = 1_000;

/** Parses `--port N` (default 0, an ephemeral port) and boolean `--flags`. */
export function parseArgs(argv = process.argv.slice(2)) {
  const flags = new Set();
  let port = 0;
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--port") {
      port = Number(argv[++i]);
      if (!Number.isInteger(port) || port < 0 || port > 65535) {
        throw new Error("--port must be an integer from 0 to 65535");
      }
    } else if (argv[i].startsWith("--")) {
      flags.add(argv[i].slice(2));
    } else {
      throw new Error(`unexpected argument: ${argv[i]}`);
    }
  }
  return { port, flags };
}

/**
 * Serves `handler` on 127.0.0.1, prints the single ready line to stdout, and exits cleanly on
 * SIGTERM/SIGINT: `onClose` (closing sessions) gets SHUTDOWN_GRACE_MS, then the listener and its
 * connections close.
 * With `--exit-with-stdin` the server also exits when its stdin ends, so a fleet parent that dies
 * without running its exit handlers (SIGKILL) still takes its children with it.
 */
export async function serve(handler, { path, port, flags, onClose = async () => {} }) {
  const server = createServer((req, res) => {
    Promise.resolve(handler(req, res)).catch((error) => {
      process.stderr.write(`request failed: ${error?.stack ?? error}\n`);
      if (!res.headersSent) res.writeHead(500, { "content-type": "text/plain" });
      res.end("Internal server error");
    });
  });
  await new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", resolve);
  });
  let closing = false;
  const shutdown = async () => {
    if (closing) return;
    closing = true;
    await Promise.race([onClose().catch(() => {}), setTimeout(SHUTDOWN_GRACE_MS)]);
    server.closeAllConnections();
    server.close();
    process.exit(0);
  };
  // Installed before the ready line, so a parent may signal as soon as it reads that line.
  process.once("SIGTERM", shutdown);
  process.once("SIGINT", shutdown);
  if (flags.has("exit-with-stdin")) {
    process.stdin.on("end", shutdown).on("close", shutdown).resume();
  }
  const url = `http://127.0.0.1:${server.address().port}${path}`;
  process.stdout.write(`${JSON.stringify({ ready: true, url })}\n`);
  return server;
}

/**
 * Reads a JSON request body, bounded. Resolves `{ ok: true, value }`, or `{ ok: false, status,
 * message }` for a body that is too large or not JSON.
 */
export async function readJsonBody(req) {
  const chunks = [];
  let seen = 0;
  for await (const chunk of req) {
    if (seen + chunk.byteLength > MAX_BODY_BYTES)
      return { ok: false, status: 413, message: "Payload too large" };
    seen += chunk.byteLength;
    chunks.push(chunk);
  }
  try {
    return { ok: true, value: JSON.parse(Buffer.concat(chunks).toString("utf8")) };
  } catch {
    return { ok: false, status: 400, message: "Parse error: body is not JSON" };
  }
}

/** Answers a JSON-RPC error outside any session, the way the SDK's own examples do. */
export function sendJsonRpcError(res, status, code, message, id = null) {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id }));
}

/**
 * Adapts a web-standard `fetch(Request) => Response` handler to `node:http`. The Request's signal
 * aborts when the client disconnects before the response is complete, which is how a modern
 * (2026-07-28) client cancels a request.
 */
export function fromFetchHandler(fetchHandler) {
  return async (req, res) => {
    const controller = new AbortController();
    res.on("close", () => {
      if (!res.writableFinished) controller.abort();
    });
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) {
      headers.set(name, Array.isArray(value) ? value.join(", ") : value);
    }
    const hasBody = req.method !== "GET" && req.method !== "HEAD";
    const request = new Request(new URL(req.url, "http://127.0.0.1"), {
      method: req.method,
      headers,
      body: hasBody ? Readable.toWeb(req) : undefined,
      duplex: "half",
      signal: controller.signal,
    });
    const response = await fetchHandler(request);
    res.writeHead(response.status, Object.fromEntries(response.headers));
    if (!response.body) return void res.end();
    // A client that disconnects mid-body ends the pipeline early; that is not a server failure.
    await pipeline(Readable.fromWeb(response.body), res).catch(() => {});
  };
}
