// What the framework adapters' tests share: the recording server (fixtures/integrations/
// recording-server.mjs) and server-everything as targets, a client per test, and events waited
// for with a bound instead of slept for.

import { fileURLToPath } from "node:url";
import { type Client, type ConnectOptions, connect, type LoggingMessage } from "../../src/index.ts";
import { CANARIES } from "./canaries.ts";
import { serverPath } from "./fleet.ts";

/** How long a test waits for something the server or the framework says will happen. */
export const EVENT_MS = 20_000;

export const RECORDING_SERVER = fileURLToPath(
  new URL("../fixtures/integrations/recording-server.mjs", import.meta.url),
);

/** server-everything over stdio. */
export const EVERYTHING: ConnectOptions = {
  command: process.execPath,
  args: [serverPath("everything.mjs"), "stdio"],
};

/** The recording server over stdio; its `fail` tool's error text carries a canary tether does not know of. */
export const RECORDING: ConnectOptions = {
  command: process.execPath,
  args: [RECORDING_SERVER, "--canary", CANARIES.header],
};

/** A client of its own for one test, closed after it. */
export async function withClient(
  target: ConnectOptions,
  fn: (client: Client) => Promise<void>,
): Promise<void> {
  const client = await connect(target);
  try {
    await fn(client);
  } finally {
    await client.close();
  }
}

/** A promise that `resolve` settles, failing after EVENT_MS with what was awaited. */
export function event<T>(what: string): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((res, rej) => {
    const timer = setTimeout(() => rej(new Error(`no ${what} within ${EVENT_MS} ms`)), EVENT_MS);
    resolve = (value) => {
      clearTimeout(timer);
      res(value);
    };
  });
  return { promise, resolve };
}

/** The data of the first log message from the server that `match` accepts. */
export function logged(
  client: Client,
  what: string,
  match: (data: Record<string, unknown>) => boolean,
): Promise<Record<string, unknown>> {
  const { promise, resolve } = event<Record<string, unknown>>(what);
  const stop = client.onLogMessage((message: LoggingMessage) => {
    const data = message.data as Record<string, unknown>;
    if (typeof data === "object" && data !== null && match(data)) {
      stop();
      resolve(data);
    }
  });
  return promise;
}
