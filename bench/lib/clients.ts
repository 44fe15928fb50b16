// The clients under test behind one small shape, so a section measures "a client" without caring
// which. Ours is the library from src/, compiled once per run (lib/library.ts).

import {
  type DiscoverResult,
  type PriorDiscovery,
  Client as V2Client,
  StreamableHTTPClientTransport as V2Http,
  SSEClientTransport as V2Sse,
} from "@modelcontextprotocol/client";
import { StdioClientTransport as V2Stdio } from "@modelcontextprotocol/client/stdio";
import { Client as V1Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport as V1Sse } from "@modelcontextprotocol/sdk/client/sse.js";
import { StdioClientTransport as V1Stdio } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport as V1Http } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { ConnectSettings, HttpTarget as HttpOptions, StdioTarget } from "../../src/index.ts";
import { lib } from "./library.ts";

export interface BenchClient {
  listTools(): Promise<unknown>;
  callTool(name: string, args: Record<string, unknown>, maxResponseBytes?: number): Promise<unknown>;
  close(): Promise<void>;
  /** The negotiated protocol version, when the client tells. */
  version(): string | undefined;
}

export type Target =
  | { kind: "http"; url: string; transport: "streamable-http" | "sse" }
  | { kind: "stdio"; command: string; args: string[] };

export type HttpTarget = Extract<Target, { kind: "http" }>;

const INFO = { name: "tether-bench", version: "0.0.0" };

/** Our client; `transport` (default auto) applies to an HTTP target only. */
export async function ours(
  target: Target,
  options: ConnectSettings & Pick<HttpOptions, "transport"> = {},
): Promise<BenchClient> {
  const { transport = "auto", ...settings } = options;
  // Establishment is measured up to a tool list, so ours lists as part of connecting (as the CLI
  // does): that listing is also what confirms a stored discover result.
  const client = await lib.connect(
    target.kind === "http"
      ? { prefetchTools: true, ...settings, url: target.url, transport }
      : ({
          prefetchTools: true,
          ...settings,
          command: target.command,
          args: target.args,
        } satisfies StdioTarget),
  );
  let prefetched = client.cachedTools;
  return {
    listTools: async () => {
      const tools = prefetched;
      prefetched = undefined;
      return tools ?? client.listTools();
    },
    callTool: (name, args, maxResponseBytes) =>
      client.callTool(name, args as never, maxResponseBytes ? { maxResponseBytes } : {}),
    close: () => client.close(),
    version: () => client.protocolVersion,
  };
}

/**
 * The official v2 client (`@modelcontextprotocol/client`). `negotiation: "auto"` probes with
 * server/discover and falls back to initialize, as ours does cold; `"legacy"` (its default) is the
 * plain 2025 handshake. `prior` is its cached era verdict (a known-legacy server skips the probe;
 * a known-modern one adopts a stored discover result with no round trip).
 */
export async function officialV2(
  target: Target,
  {
    negotiation = "auto",
    fetch,
    prior,
  }: { negotiation?: "auto" | "legacy"; fetch?: typeof globalThis.fetch; prior?: PriorDiscovery } = {},
): Promise<BenchClient & { discoverResult(): DiscoverResult | undefined }> {
  const client = new V2Client(INFO, { versionNegotiation: { mode: negotiation } });
  const transport =
    target.kind === "stdio"
      ? new V2Stdio({ command: target.command, args: target.args, stderr: "ignore" })
      : target.transport === "sse"
        ? new V2Sse(new URL(target.url), { fetch })
        : new V2Http(new URL(target.url), { fetch });
  await client.connect(transport, prior ? { prior } : undefined);
  return {
    listTools: () => client.listTools(),
    callTool: (name, args) => client.callTool({ name, arguments: args }),
    close: () => client.close(),
    version: () => client.getNegotiatedProtocolVersion(),
    discoverResult: () => client.getDiscoverResult(),
  };
}

/** The official v1 client (`@modelcontextprotocol/sdk`): no era detection, the plain 2025 handshake. */
export async function officialV1(
  target: Target,
  { fetch }: { fetch?: typeof globalThis.fetch } = {},
): Promise<BenchClient> {
  const client = new V1Client(INFO);
  const transport =
    target.kind === "stdio"
      ? new V1Stdio({ command: target.command, args: target.args, stderr: "ignore" })
      : target.transport === "sse"
        ? new V1Sse(new URL(target.url), { fetch })
        : new V1Http(new URL(target.url), { fetch });
  await client.connect(transport);
  return {
    listTools: () => client.listTools(),
    callTool: (name, args) => client.callTool({ name, arguments: args }),
    close: () => client.close(),
    version: () => undefined,
  };
}

/**
 * What the v1 SDK documents for a client that does not know the transport: try Streamable HTTP,
 * and on failure open HTTP+SSE instead.
 */
export async function officialV1Fallback(
  url: string,
  { fetch }: { fetch?: typeof globalThis.fetch } = {},
): Promise<BenchClient> {
  try {
    return await officialV1({ kind: "http", url, transport: "streamable-http" }, { fetch });
  } catch {
    return await officialV1({ kind: "http", url, transport: "sse" }, { fetch });
  }
}
