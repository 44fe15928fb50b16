// A typed view of examples/fleet.mjs for tests: one fleet per test file, started in `before` and
// stopped in `after`, so every test in the file shares the same child servers.

import { after, before } from "node:test";
import type { Era, ProtocolVersion, TransportMode } from "../../src/index.ts";

export type HttpServerName =
  | "legacy-sse-2024-11-05"
  | "streamable-2025-06-18"
  | "streamable-2025-11-25-sse"
  | "streamable-2025-11-25-json"
  | "modern-2026-07-28";

export type StdioServerName = "legacy-stdio" | "modern-stdio" | "everything-stdio";

export type ServerName = HttpServerName | StdioServerName;

export const HTTP_SERVER_NAMES: readonly HttpServerName[] = [
  "legacy-sse-2024-11-05",
  "streamable-2025-06-18",
  "streamable-2025-11-25-sse",
  "streamable-2025-11-25-json",
  "modern-2026-07-28",
];

export const STDIO_SERVER_NAMES: readonly StdioServerName[] = [
  "legacy-stdio",
  "modern-stdio",
  "everything-stdio",
];

export interface FleetHttpServer {
  name: HttpServerName;
  era: Era;
  /** The version the server speaks natively (what an `auto` client should negotiate). */
  version: ProtocolVersion;
  transport: Exclude<TransportMode, "stdio">;
  url: string;
}

export interface FleetStdioServer {
  name: StdioServerName;
  era: Era;
  version: ProtocolVersion;
  command: string;
  args: string[];
}

export interface Fleet {
  servers: FleetHttpServer[];
  stdio: FleetStdioServer[];
  /** The HTTP server of that name; throws if it was not started. */
  http(name: HttpServerName): FleetHttpServer;
  /** The stdio server of that name; throws if it was not selected. */
  stdioServer(name: StdioServerName): FleetStdioServer;
  /** Stops every child; idempotent. */
  close(): Promise<void>;
}

interface FleetModule {
  serverPath(file: string): string;
  startFleet(options?: { only?: readonly string[] }): Promise<{
    servers: FleetHttpServer[];
    stdio: FleetStdioServer[];
    close(): Promise<void>;
  }>;
}

// A computed specifier: the example is plain JS without declarations, typed by FleetModule above.
const FLEET_MODULE = new URL("../../examples/fleet.mjs", import.meta.url).href;

/**
 * The script a fleet server starts from (`legacy-stdio.mjs`, `everything.mjs` for
 * server-everything): the test runner's one-file bundle of it when there is one, else its source.
 */
export const serverPath: (file: string) => string = ((await import(FLEET_MODULE)) as FleetModule).serverPath;

/** Starts the named servers (all by default) and returns a typed handle. */
export async function startFleet(only?: readonly ServerName[]): Promise<Fleet> {
  const mod = (await import(FLEET_MODULE)) as FleetModule;
  const raw = await mod.startFleet(only === undefined ? {} : { only });
  return {
    servers: raw.servers,
    stdio: raw.stdio,
    http(name) {
      const server = raw.servers.find((s) => s.name === name);
      if (!server) throw new Error(`fleet: HTTP server ${name} was not started`);
      return server;
    },
    stdioServer(name) {
      const server = raw.stdio.find((s) => s.name === name);
      if (!server) throw new Error(`fleet: stdio server ${name} was not selected`);
      return server;
    },
    close: () => raw.close(),
  };
}

/**
 * Registers `before`/`after` hooks that start the fleet once for the enclosing file (or suite)
 * and stop it afterwards. Call the returned function inside a test to get the running fleet.
 */
export function useFleet(only?: readonly ServerName[]): () => Fleet {
  let fleet: Fleet | undefined;
  before(async () => {
    fleet = await startFleet(only);
  });
  after(async () => {
    await fleet?.close();
  });
  return () => {
    if (!fleet) throw new Error("fleet: not started (use it inside a test, after `before` ran)");
    return fleet;
  };
}
