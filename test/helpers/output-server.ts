// A scripted MCP server for output tests: every answer (tools, a call, resources, a read, prompts,
// a prompt, a JSON-RPC error) comes from one JSON document the test writes, served over stdio (a
// script written from source) or Streamable HTTP (in process, on 127.0.0.1 port 0). Every string
// in the document may hold SEEN, which the server replaces with what it was given: on stdio the
// values of its TETHER_ECHO_* environment variables, on HTTP every header value (a Basic
// credential decoded too) and query value of the request; each as is, URL-encoded and base64,
// the forms a careless server echoes.

import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before } from "node:test";
import {
  type Handler,
  type HostileServer,
  json,
  legacyStreamableHandler,
  rpcError,
  rpcResult,
  type StdioScript,
  startHttp,
  startStdioScript,
} from "./hostile.ts";

export const SEEN = "{{seen}}";

/** Everything the server answers. The tool named `fail` and the resource `fail://x` get `errorMessage`. */
export interface OutputDocument {
  serverName: string;
  tools: Record<string, unknown>[];
  /** The result of calling any tool but `fail` and `structured`. */
  call: Record<string, unknown>;
  /** The result of calling `structured`. */
  structured: Record<string, unknown>;
  resources: Record<string, unknown>[];
  read: Record<string, unknown>;
  prompts: Record<string, unknown>[];
  prompt: Record<string, unknown>;
  errorMessage: string;
}

/** The text that replaces SEEN for these values. */
export function seenText(values: string[]): string {
  return values
    .filter((v) => v !== "")
    .map((v) => `${v} ${encodeURIComponent(v)} ${Buffer.from(v).toString("base64")}`)
    .join(" ; ");
}

/** Shared by the stdio script (as source) and the HTTP server: SEEN replaced in every string. */
const FILL_SOURCE = `function fill(value, seen) {
  if (typeof value === "string") return value.split(${JSON.stringify(SEEN)}).join(seen);
  if (Array.isArray(value)) return value.map((v) => fill(v, seen));
  if (value && typeof value === "object") {
    const out = {};
    for (const [k, v] of Object.entries(value)) out[fill(k, seen)] = fill(v, seen);
    return out;
  }
  return value;
}`;

function fill(value: unknown, seen: string): unknown {
  if (typeof value === "string") return value.split(SEEN).join(seen);
  if (Array.isArray(value)) return value.map((v) => fill(v, seen));
  if (value && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[fill(k, seen) as string] = fill(v, seen);
    return out;
  }
  return value;
}

/** The JSON-RPC result (or error) for one request, from the document already filled. */
function answer(
  doc: OutputDocument,
  method: string,
  params: Record<string, unknown> | undefined,
): { result?: unknown; error?: { code: number; message: string } } {
  const fail = { error: { code: -32000, message: doc.errorMessage } };
  switch (method) {
    case "tools/list":
      return { result: { tools: doc.tools } };
    case "tools/call":
      if (params?.name === "fail") return fail;
      return { result: params?.name === "structured" ? doc.structured : doc.call };
    case "resources/list":
      return { result: { resources: doc.resources } };
    case "resources/read":
      return params?.uri === "fail://x" ? fail : { result: doc.read };
    case "prompts/list":
      return { result: { prompts: doc.prompts } };
    case "prompts/get":
      return { result: doc.prompt };
    case "ping":
      return { result: {} };
    default:
      return { error: { code: -32601, message: "Method not found" } };
  }
}

/** A legacy stdio server answering from `doc`; SEEN is what its TETHER_ECHO_* variables hold. */
export function outputStdioServer(doc: OutputDocument): StdioScript {
  return startStdioScript(`
${FILL_SOURCE}
const answer = ${answer.toString()};
const seenText = ${seenText.toString()};
const seen = seenText(Object.entries(process.env).filter(([k]) => k.startsWith("TETHER_ECHO_")).map(([, v]) => v));
const doc = fill(${JSON.stringify(doc)}, seen);
onMessage((m) => {
  if (typeof m.method !== "string" || m.id === undefined) return;
  if (m.method === "initialize") {
    const v = m.params?.protocolVersion;
    return send({ jsonrpc: "2.0", id: m.id, result: { protocolVersion: ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"].includes(v) ? v : "2025-11-25", capabilities: { tools: {}, resources: {}, prompts: {} }, serverInfo: { name: doc.serverName, version: "1" } } });
  }
  if (m.method === "server/discover") return send({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "Method not found" } });
  send({ jsonrpc: "2.0", id: m.id, ...answer(doc, m.method, m.params) });
});
`);
}

/** A legacy Streamable HTTP server answering from `doc`; SEEN is every header and query value it got. */
export async function outputHttpServer(doc: OutputDocument): Promise<HostileServer> {
  const filled = (values: string[]) => fill(doc, seenText(values)) as OutputDocument;
  const per = (): Handler => (res, rec, req) => {
    const query = [...new URL(rec.path, "http://127.0.0.1").searchParams.values()];
    const headers = Object.entries(rec.headers).flatMap(([name, v]) =>
      ["host", "content-type", "content-length", "accept", "connection", "user-agent"].includes(name)
        ? []
        : Array.isArray(v)
          ? v
          : v === undefined
            ? []
            : [v],
    );
    // A careless server decodes Basic credentials too, and echoes the user name and password.
    const basic = headers.flatMap((h) =>
      /^Basic /i.test(h) ? [Buffer.from(h.slice(6), "base64").toString("utf8")] : [],
    );
    const reply = answer(filled([...headers, ...basic, ...query]), rec.rpcMethod ?? "", rec.rpcParams);
    const body = reply.error
      ? rpcError(rec.rpcId, reply.error.code, reply.error.message)
      : rpcResult(rec.rpcId, reply.result);
    return json(200, body)(res, rec, req);
  };
  const overrides = Object.fromEntries(
    ["tools/list", "tools/call", "resources/list", "resources/read", "prompts/list", "prompts/get"].map(
      (m) => [m, per()],
    ),
  );
  return await startHttp(
    legacyStreamableHandler({
      ...overrides,
      initialize: (res, rec, req) =>
        json(
          200,
          rpcResult(rec.rpcId, {
            protocolVersion: "2025-06-18",
            capabilities: { tools: {}, resources: {}, prompts: {} },
            serverInfo: { name: doc.serverName, version: "1" },
          }),
          { headers: { "mcp-session-id": "hostile-session-1" } },
        )(res, rec, req),
    }),
  );
}

/**
 * Writes `configDir`/auth.json (0600) holding one stored token for `url`, as a sign-in would have
 * left it; `fields` (the access token, say) are set on top of a minimal record.
 */
export function writeStoredToken(configDir: string, url: string, fields: Record<string, string>): void {
  writeFileSync(
    join(configDir, "auth.json"),
    JSON.stringify({
      version: 1,
      records: {
        [`server ${url}`]: {
          kind: "tokens",
          resource: url,
          issuer: "https://as.example",
          tokenEndpoint: "https://as.example/token",
          clientId: "c",
          authMethod: "none",
          ...fields,
        },
      },
    }),
    { mode: 0o600 },
  );
}

/**
 * For the suite it is called in: `doc` served over stdio and over Streamable HTTP, started before
 * its first test and handed to `receive`, closed after its last.
 */
export function outputServersForSuite(
  doc: OutputDocument,
  receive: (stdio: StdioScript, http: HostileServer) => void,
): void {
  let stdio: StdioScript | undefined;
  let http: HostileServer | undefined;
  before(async () => {
    stdio = outputStdioServer(doc);
    http = await outputHttpServer(doc);
    receive(stdio, http);
  });
  after(async () => {
    stdio?.dispose();
    await http?.close();
  });
}

/** The document the server answers with for these seen values (what `--json` output must equal). */
export function expectedDocument(doc: OutputDocument, seen: string[] = []): OutputDocument {
  return fill(doc, seenText(seen)) as OutputDocument;
}
