// A typed view of examples/fleet.mjs for the bench (the example is plain JS without declarations).

export interface FleetHttpServer {
  name: string;
  era: "legacy" | "modern";
  version: string;
  transport: "streamable-http" | "sse";
  url: string;
}

export interface FleetStdioServer {
  name: string;
  era: "legacy" | "modern";
  version: string;
  command: string;
  args: string[];
}

export interface Fleet {
  servers: FleetHttpServer[];
  stdio: FleetStdioServer[];
  close(): Promise<void>;
}

interface FleetModule {
  startFleet(options?: { only?: readonly string[] }): Promise<Fleet>;
}

// A computed specifier keeps the untyped module out of the type checker's way.
const FLEET_MODULE = new URL("../../examples/fleet.mjs", import.meta.url).href;

export async function startFleet(only?: readonly string[]): Promise<Fleet> {
  const mod = (await import(FLEET_MODULE)) as FleetModule;
  return mod.startFleet(only === undefined ? {} : { only });
}

export function httpServer(fleet: Fleet, name: string): FleetHttpServer {
  const s = fleet.servers.find((x) => x.name === name);
  if (!s) throw new Error(`bench: HTTP server ${name} was not started`);
  return s;
}

export function stdioServer(fleet: Fleet, name: string): FleetStdioServer {
  const s = fleet.stdio.find((x) => x.name === name);
  if (!s) throw new Error(`bench: stdio server ${name} is not in the fleet`);
  return s;
}
