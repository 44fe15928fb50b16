// A bare node:http JSON-RPC server for the memory benchmark (§4): Streamable HTTP, stateless,
// JSON replies, one tool `big {bytes}`. Its tools/call reply is streamed in 64 KiB chunks with
// back-pressure and never built in memory, so a 200 MB reply costs this process nothing and it
// can report how many bytes reached the socket before the client hung up.
//
//   node bench/scripts/big-reply-server.mjs        prints {"ready":true,"url":...}
//   GET /stats                                     the last call: requested, written, complete
//
// Exits when its stdin ends, so it never outlives the bench.

import { createServer } from "node:http";

const CHUNK = Buffer.alloc(64 * 1024, "x");
const VERSIONS = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];
const BIG_TOOL = {
  name: "big",
  description: "Returns one text content of exactly `bytes` ASCII 'x' characters.",
  inputSchema: {
    type: "object",
    properties: { bytes: { type: "integer", minimum: 0 } },
    required: ["bytes"],
  },
};

let last = null;

function json(res, status, body) {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

async function streamBig(res, id, bytes) {
  const head = Buffer.from(
    `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"content":[{"type":"text","text":"`,
  );
  const tail = Buffer.from('"}]}}');
  const stats = {
    requested: bytes,
    total: head.length + bytes + tail.length,
    written: 0,
    complete: false,
    ms: 0,
  };
  last = stats;
  const started = performance.now();
  let gone = false;
  res.on("close", () => {
    gone = true;
  });
  // Chunked transfer, no content-length: the client learns the size only by reading.
  res.writeHead(200, { "content-type": "application/json" });
  const write = (buf) =>
    new Promise((resolve) => {
      // The callback fires once the chunk is handed to the kernel (or fails): bytes "written".
      const more = res.write(buf, (err) => {
        if (!err) stats.written += buf.length;
      });
      if (more || gone) return resolve();
      const done = () => {
        res.off("drain", done);
        res.off("close", done);
        resolve();
      };
      res.on("drain", done);
      res.on("close", done);
    });
  await write(head);
  let left = bytes;
  while (left > 0 && !gone) {
    const n = Math.min(left, CHUNK.length);
    await write(n === CHUNK.length ? CHUNK : CHUNK.subarray(0, n));
    left -= n;
  }
  if (!gone) {
    await write(tail);
    await new Promise((resolve) => res.end(resolve));
  }
  stats.complete = stats.written === stats.total;
  stats.ms = performance.now() - started;
}

async function handle(req, res) {
  const url = new URL(req.url, "http://127.0.0.1");
  if (url.pathname === "/stats" && req.method === "GET") return json(res, 200, last ?? {});
  if (url.pathname !== "/mcp") return json(res, 404, { error: "not found" });
  if (req.method !== "POST") {
    res.writeHead(405, { allow: "POST" }).end();
    return;
  }
  const chunks = [];
  for await (const c of req) chunks.push(c);
  let message;
  try {
    message = JSON.parse(Buffer.concat(chunks).toString("utf8"));
  } catch {
    return json(res, 400, { jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error" } });
  }
  const { id, method, params } = message;
  if (id === undefined) {
    res.writeHead(202).end();
    return;
  }
  switch (method) {
    case "initialize": {
      const asked = params?.protocolVersion;
      return json(res, 200, {
        jsonrpc: "2.0",
        id,
        result: {
          protocolVersion: VERSIONS.includes(asked) ? asked : VERSIONS[0],
          capabilities: { tools: {} },
          serverInfo: { name: "big-reply", version: "0.0.0" },
        },
      });
    }
    case "tools/list":
      return json(res, 200, { jsonrpc: "2.0", id, result: { tools: [BIG_TOOL] } });
    case "tools/call":
      if (params?.name === "big" && Number.isInteger(params?.arguments?.bytes))
        return streamBig(res, id, params.arguments.bytes);
      return json(res, 200, { jsonrpc: "2.0", id, error: { code: -32602, message: "Unknown tool" } });
    default:
      return json(res, 200, { jsonrpc: "2.0", id, error: { code: -32601, message: "Method not found" } });
  }
}

const server = createServer((req, res) => {
  handle(req, res).catch(() => res.destroy());
});
server.listen(0, "127.0.0.1", () => {
  process.stdout.write(
    `${JSON.stringify({ ready: true, url: `http://127.0.0.1:${server.address().port}/mcp` })}\n`,
  );
});
process.stdin
  .on("end", () => process.exit(0))
  .on("close", () => process.exit(0))
  .resume();
