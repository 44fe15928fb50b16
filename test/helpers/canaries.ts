// Canary secrets for the faces that hand a server's words on (sessions, the bridge), and the
// check that none of them leaks, in any form: the careless echo server (fixtures/secrets/
// echo-server.mjs) sends each one back as is, URL-encoded, JSON-escaped and base64 at every
// alignment. Each canary holds the word CANARY and characters that change under each encoding
// (`"` and `\` under JSON, `/`, `+`, `=`, a space, `&` and `é` under URL encoding).

import assert from "node:assert/strict";
import { after, before } from "node:test";
import { fileURLToPath } from "node:url";
import { type ExampleServer, startExampleServer } from "./hostile.ts";

export const ECHO_SERVER = fileURLToPath(new URL("../fixtures/secrets/echo-server.mjs", import.meta.url));

export const CANARIES = {
  bearer: "bearer.CANARY/7d1e+9a40c2=",
  header: 'hdr"CANARY\\3f6b2c81aa',
  /** Given in the URL percent-encoded; the server decodes it to this. */
  query: "qry CANARY&91e4éb7",
  env: 'envval"CANARY\\5c2d/8e1f77',
} as const;

/** The URL query that carries the query canary. */
export const CANARY_QUERY = `key=${encodeURIComponent(CANARIES.query)}`;

/**
 * What in `text` still says a canary: the word CANARY itself (plain, URL-encoded and JSON-escaped
 * forms all keep it), or a base64 or base64url run that decodes to it from any alignment.
 */
export function leaks(text: string): string[] {
  const found: string[] = [];
  if (text.includes("CANARY")) found.push("CANARY as text");
  for (const run of text.match(/[A-Za-z0-9+/_-]{8,}/g) ?? [])
    for (let start = 0; start < 4; start++)
      if (Buffer.from(run.slice(start), "base64").toString("latin1").includes("CANARY"))
        found.push(`base64 run ${run}`);
  return found;
}

/** Fails naming the leak and showing the output. */
export function assertNoLeak(text: string, what: string): void {
  const found = leaks(text);
  assert.deepEqual(found, [], `${what} leaks a canary (${found.join(", ")}):\n${text.slice(0, 4000)}`);
}

/** The echo server over HTTP: Streamable HTTP at `url` (/mcp), HTTP+SSE at `sse` (/sse). */
export type EchoHttp = ExampleServer & { sse: string };

export async function startEchoHttp(): Promise<EchoHttp> {
  const server = await startExampleServer(ECHO_SERVER, ["http"]);
  return { ...server, sse: server.url.replace(/\/mcp$/, "/sse") };
}

/**
 * The echo server for one test file: started before its tests and closed after them; the
 * environment that carries the bearer canary, and the ways to reach the server (echoUpstreams).
 */
export function useEchoServer(): {
  http: () => EchoHttp;
  env: Record<string, string>;
  upstreams: Record<string, () => string[]>;
} {
  let http: EchoHttp | undefined;
  before(async () => {
    http = await startEchoHttp();
  });
  after(async () => {
    await http?.close();
  });
  const started = () => {
    if (!http) throw new Error("the echo server is started before the file's tests");
    return http;
  };
  return { http: started, env: { TETHER_TEST_BEARER: CANARIES.bearer }, upstreams: echoUpstreams(started) };
}

/**
 * How a command reaches the echo server with every canary configured, by upstream transport:
 * the target words, with the secrets it is handed (-e values over stdio; the bearer token from
 * TETHER_TEST_BEARER, a -H value and a query value over HTTP).
 */
export function echoUpstreams(http: () => { url: string; sse: string }): Record<string, () => string[]> {
  const auth = ["--bearer-env", "TETHER_TEST_BEARER", "-H", `X-Api-Key: ${CANARIES.header}`];
  return {
    stdio: () => [
      "-e",
      `TETHER_ECHO_KEY=${CANARIES.env}`,
      "-e",
      `TETHER_ECHO_TOKEN=${CANARIES.bearer}`,
      "--",
      process.execPath,
      ECHO_SERVER,
      "stdio",
    ],
    "streamable-http": () => [`${http().url}?${CANARY_QUERY}`, ...auth],
    sse: () => [`${http().sse}?${CANARY_QUERY}`, "--transport", "sse", ...auth],
  };
}
