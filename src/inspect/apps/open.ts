/**
 * The explorer's `app` operation: a tool's MCP App made ready for its frame. The tool's `ui://`
 * resource is read through the user's connection (recorded in the message history as a
 * `resources/read` with its size, not its whole text), redacted, and published on the apps
 * listener; the page gets the frame's URL, the policy it is served with, and the declared sources
 * that were refused.
 */

import type { Client } from "../../client/api.ts";
import type { Tool } from "../../client/results.ts";
import type { JsonObject } from "../../jsonrpc/messages.ts";
import type { AppFrames } from "./frames.ts";
import { appResourceUri, notAnApp, readAppResource } from "./resource.ts";

/** What the operation needs of a connection (the explorer's Connection has it). */
export interface AppConnection {
  ready(): Promise<Client>;
  redact<T>(value: T): T;
  message(dir: "in" | "out", method: string, body: unknown): void;
}

/** Reads and publishes the app of `tool`; `protocol` / `not_an_app` when it has none. */
export async function openApp(
  conn: AppConnection,
  frames: AppFrames,
  tool: Tool,
  signal: AbortSignal,
): Promise<JsonObject> {
  const uri = appResourceUri(tool);
  if (!uri) throw notAnApp(`${tool.name} names no ui:// resource: it has no app`);
  const client = await conn.ready();
  conn.message("out", "resources/read", { uri });
  let app: Awaited<ReturnType<typeof readAppResource>>;
  try {
    app = conn.redact(await readAppResource(client, uri, { signal }));
  } catch (error) {
    conn.message("in", "resources/read (error)", { message: conn.redact(String((error as Error).message)) });
    throw error;
  }
  const bytes = Buffer.byteLength(app.html);
  conn.message("in", "resources/read (result)", { uri, bytes, csp: app.csp, refused: app.refused });
  const published = frames.publish(app.html, app.csp);
  return {
    resourceUri: uri,
    url: published.url,
    origin: frames.origin,
    csp: published.csp,
    approved: app.csp as unknown as JsonObject,
    refused: app.refused,
    bytes,
    ...(app.prefersBorder === undefined ? {} : { prefersBorder: app.prefersBorder }),
  };
}
