// Not part of `npm run bench`: the experiment behind the §4 note in docs/benchmarks.md. Reads one
// 200 MB JSON-RPC reply from big-reply-server.mjs with bare fetch and a chosen way of turning the
// body into the result, and prints the peak RSS growth, so the memory cost of each step is seen
// apart from any client.
//
//   node bench/scripts/big-reply-server.mjs &      (note its URL)
//   node --expose-gc bench/scripts/memory-strategies.mjs <url> <strategy>
//
// strategies:
//   join-decode-parse     keep every chunk, join into one buffer, decode, JSON.parse (what tether does)
//   response-json         Response.json() (what the official clients do)
//   stream-decode-parse   decode each chunk as it arrives, join the text, JSON.parse
//   streaming-rope        stand-in for a streaming JSON parser: only the big string value is kept,
//                         as a rope of decoded slices; no whole-body buffer or text ever exists

const [url, strategy] = process.argv.slice(2);
const BYTES = 200_000_000;
const post = (id, method, params) =>
  fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify({ jsonrpc: "2.0", id, method, params }),
  });

await (
  await post(1, "initialize", {
    protocolVersion: "2025-11-25",
    capabilities: {},
    clientInfo: { name: "memory-strategies", version: "0" },
  })
).text();
for (let i = 0; i < 3; i++) {
  globalThis.gc();
  await new Promise((r) => setTimeout(r, 30));
}
const baseline = process.memoryUsage().rss;
const maxAtBaseline = process.resourceUsage().maxRSS * 1024;
let peak = baseline;
const sampler = setInterval(() => {
  peak = Math.max(peak, process.memoryUsage().rss);
}, 2);

const response = await post(2, "tools/call", { name: "big", arguments: { bytes: BYTES } });
let text;
if (strategy === "join-decode-parse") {
  const parts = [];
  let total = 0;
  for await (const chunk of response.body) {
    parts.push(chunk);
    total += chunk.byteLength;
  }
  const joined = new Uint8Array(total);
  let offset = 0;
  for (const p of parts) {
    joined.set(p, offset);
    offset += p.byteLength;
  }
  text = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(joined)).result.content[0].text;
} else if (strategy === "response-json") {
  text = (await response.json()).result.content[0].text;
} else if (strategy === "stream-decode-parse") {
  const decoder = new TextDecoder("utf-8", { fatal: true });
  const parts = [];
  for await (const chunk of response.body) parts.push(decoder.decode(chunk, { stream: true }));
  parts.push(decoder.decode());
  text = JSON.parse(parts.join("")).result.content[0].text;
} else if (strategy === "streaming-rope") {
  const decoder = new TextDecoder("utf-8", { fatal: true });
  const marker = '"text":"';
  let head = "";
  let inText = false;
  text = "";
  for await (const chunk of response.body) {
    let piece = decoder.decode(chunk, { stream: true });
    if (!inText) {
      head += piece;
      const at = head.indexOf(marker);
      if (at === -1) continue;
      inText = true;
      piece = head.slice(at + marker.length);
    }
    const end = piece.indexOf('"');
    text += end === -1 ? piece : piece.slice(0, end);
  }
} else {
  throw new Error(`unknown strategy ${strategy}`);
}
clearInterval(sampler);
const maxEnd = process.resourceUsage().maxRSS * 1024;
peak = Math.max(peak, process.memoryUsage().rss, maxEnd > maxAtBaseline ? maxEnd : 0);
const growth = peak - baseline;
console.log(
  `${strategy.padEnd(20)} ${(growth / 2 ** 20).toFixed(0)} MiB growth, ${(growth / BYTES).toFixed(2)}× the reply (text ${text.length} chars)`,
);
