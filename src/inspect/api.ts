/**
 * The explorer's JSON API over the library: one function per operation, each under the
 * library's budgets with a signal that aborts when the page gives up or the explorer closes.
 * What it returns is redacted with the connection's redactor (S4); a failure is the error record.
 */
import type { Client } from "../client/api.ts";
import type { CallToolResult, CompletionRef, LoggingLevel, Tool } from "../client/results.ts";
import { LOGGING_LEVELS } from "../client/results.ts";
import type { JsonObject, JsonValue } from "../jsonrpc/messages.ts";
import type { AppFrames } from "./apps/frames.ts";
import { openApp } from "./apps/open.ts";
import { type Connection, NotConnected } from "./connection.ts";
import { REPLAYABLE } from "./replayable.ts";

export interface ApiContext {
  conn: Connection;
  body: JsonObject;
  signal: AbortSignal;
  /** The listener that serves MCP Apps' documents to their frames. */
  apps?: AppFrames;
}

/** A bad request from the page: 400, with its message. */
export class BadRequest extends Error {}

const str = (body: JsonObject, key: string): string => {
  const v = body[key];
  if (typeof v !== "string" || v.length === 0) throw new BadRequest(`${key} must be a non-empty string`);
  return v;
};
const obj = (body: JsonObject, key: string): JsonObject => {
  const v = body[key] ?? {};
  if (typeof v !== "object" || v === null || Array.isArray(v))
    throw new BadRequest(`${key} must be an object`);
  return v;
};
const strings = (value: JsonObject): Record<string, string> => {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(value)) {
    if (typeof v !== "string") throw new BadRequest(`argument ${k} must be a string`);
    out[k] = v;
  }
  return out;
};

type Op = (ctx: ApiContext) => Promise<JsonObject>;

/** Runs one request of `method`, recording it and its answer in the message history. */
async function traced<T>(
  conn: Connection,
  method: string,
  params: JsonObject,
  run: () => Promise<T>,
): Promise<T> {
  conn.message("out", method, conn.redact(params));
  try {
    const result = await run();
    conn.message("in", `${method} (result)`, conn.redact(result ?? {}));
    return result;
  } catch (error) {
    conn.message("in", `${method} (error)`, { message: conn.redact(String((error as Error).message)) });
    throw error;
  }
}

async function tools(conn: Connection, signal: AbortSignal): Promise<Tool[]> {
  const client = await conn.ready();
  return client.cachedTools ?? (await traced(conn, "tools/list", {}, () => client.listTools({ signal })));
}

/** One whole listing, under `key`, redacted. */
async function listing(
  conn: Connection,
  key: string,
  method: string,
  list: (client: Client) => Promise<unknown[]>,
): Promise<JsonObject> {
  const client = await conn.ready();
  return { [key]: conn.redact(await traced(conn, method, {}, () => list(client))) as JsonValue };
}

export const OPS: Readonly<Record<string, Op>> = {
  async connect({ conn }) {
    await conn.connect();
    return { server: conn.summary() };
  },
  async reconnect({ conn }) {
    await conn.disconnect();
    await conn.connect();
    return { server: conn.summary() };
  },
  async disconnect({ conn }) {
    await conn.disconnect();
    return { server: conn.summary() };
  },
  async overview({ conn }) {
    await conn.connect();
    return { server: conn.summary() };
  },
  async tools({ conn, signal }) {
    return { tools: conn.redact(await tools(conn, signal)) as unknown as JsonValue };
  },
  async call({ conn, body, signal }) {
    const name = str(body, "tool");
    const args = obj(body, "args");
    const callId = str(body, "callId");
    const asTask = body.task === true;
    const client = await conn.ready();
    const tool = (await tools(conn, signal)).find((t) => t.name === name);
    if (tool) conn.checkArgs(tool, args);
    const tracked = conn.track(callId, signal);
    const started = performance.now();
    try {
      const onProgress = (p: { progress: number; total?: number; message?: string }) =>
        conn.progress(callId, p as JsonObject);
      const result: CallToolResult = await traced(conn, "tools/call", { name, arguments: args }, () =>
        asTask
          ? client.callToolAsTask(name, args, {
              signal: tracked.signal,
              onStatus: (task) => conn.progress(callId, { task: task as unknown as JsonObject }),
            })
          : client.callTool(name, args, { signal: tracked.signal, onProgress }),
      );
      const ms = performance.now() - started;
      const shown = conn.redact(result);
      return {
        result: shown as unknown as JsonObject,
        ms,
        bytes: Buffer.byteLength(JSON.stringify(shown)),
        verdict: tool?.outputSchema
          ? result.structuredContent !== undefined
            ? "structuredContent matches the output schema"
            : "no structuredContent"
          : null,
      };
    } finally {
      tracked.end();
    }
  },
  async replay({ conn, body, signal }) {
    const method = str(body, "method");
    if (!REPLAYABLE.has(method)) throw new BadRequest(`${method} is not sent again from the page`);
    // The original's progress token and other _meta were for its own request.
    const { _meta, ...params } = obj(body, "params");
    const client = await conn.ready();
    const result = await traced(conn, method, params, () => client.request(method, params, { signal }));
    return { result: conn.redact(result) };
  },
  /** A tool's MCP App, published for its frame (src/inspect/apps/). */
  async app({ conn, body, signal, apps }) {
    const name = str(body, "tool");
    const tool = (await tools(conn, signal)).find((t) => t.name === name);
    if (!tool) throw new BadRequest(`the server lists no tool ${name}`);
    if (!apps) throw new BadRequest("this explorer serves no apps");
    return openApp(conn, apps, tool, signal);
  },
  async cancel({ conn, body }) {
    return { cancelled: conn.cancel(str(body, "callId")) };
  },
  resources: ({ conn, signal }) =>
    listing(conn, "resources", "resources/list", (c) => c.listResources({ signal })),
  templates: ({ conn, signal }) =>
    listing(conn, "templates", "resources/templates/list", (c) => c.listResourceTemplates({ signal })),
  prompts: ({ conn, signal }) => listing(conn, "prompts", "prompts/list", (c) => c.listPrompts({ signal })),
  async read({ conn, body, signal }) {
    const uri = str(body, "uri");
    const client = await conn.ready();
    return {
      result: conn.redact(
        await traced(conn, "resources/read", { uri }, () => client.readResource(uri, { signal })),
      ) as unknown as JsonObject,
    };
  },
  async subscribe({ conn, body, signal }) {
    const uri = str(body, "uri");
    const client = await conn.ready();
    await traced(conn, "resources/subscribe", { uri }, () => client.subscribeResource(uri, { signal }));
    return { subscribed: uri };
  },
  async unsubscribe({ conn, body, signal }) {
    const uri = str(body, "uri");
    const client = await conn.ready();
    await traced(conn, "resources/unsubscribe", { uri }, () => client.unsubscribeResource(uri, { signal }));
    return { unsubscribed: uri };
  },
  async prompt({ conn, body, signal }) {
    const name = str(body, "name");
    const args = strings(obj(body, "args"));
    const client = await conn.ready();
    return {
      result: conn.redact(
        await traced(conn, "prompts/get", { name, arguments: args }, () =>
          client.getPrompt(name, args, { signal }),
        ),
      ) as unknown as JsonObject,
    };
  },
  async complete({ conn, body, signal }) {
    const ref = obj(body, "ref");
    const argument = obj(body, "argument");
    const context = strings(obj(body, "context"));
    if (typeof argument.name !== "string" || typeof argument.value !== "string")
      throw new BadRequest("argument must have a name and a value");
    if (
      !(ref.type === "ref/prompt" && typeof ref.name === "string") &&
      !(ref.type === "ref/resource" && typeof ref.uri === "string")
    )
      throw new BadRequest("ref must be a ref/prompt with a name or a ref/resource with a uri");
    const client = await conn.ready();
    const arg = { name: argument.name, value: argument.value };
    const result = await traced(conn, "completion/complete", { ref, argument: arg }, () =>
      client.complete(ref as CompletionRef, arg, { arguments: context }, { signal }),
    );
    return { result: conn.redact(result) as unknown as JsonObject };
  },
  async setLevel({ conn, body, signal }) {
    const level = str(body, "level");
    if (!(LOGGING_LEVELS as readonly string[]).includes(level))
      throw new BadRequest(`level must be one of ${LOGGING_LEVELS.join(", ")}`);
    await conn.setLevel(level as LoggingLevel, signal);
    return { level };
  },
  async answer({ conn, body }) {
    const answer = body.answer;
    if (answer !== null && (typeof answer !== "object" || Array.isArray(answer)))
      throw new BadRequest("answer must be an object or null");
    return { answered: conn.answer(str(body, "ask"), answer ?? undefined) };
  },
  async roots({ conn, body }) {
    const roots = body.roots;
    if (!Array.isArray(roots) || roots.length > 100)
      throw new BadRequest("roots must be a list of at most 100");
    const list = roots.map((r): { uri: string; name?: string } => {
      if (typeof r !== "object" || r === null || Array.isArray(r) || typeof r.uri !== "string")
        throw new BadRequest("each root needs a uri");
      return typeof r.name === "string" && r.name ? { uri: r.uri, name: r.name } : { uri: r.uri };
    });
    conn.setRoots(list);
    return { roots: list as JsonObject[] };
  },
};

/** The page's view of a failure: the error record, or the connect's when there is no connection. */
export function failure(
  conn: Connection,
  error: unknown,
  record: (e: unknown) => Record<string, unknown>,
): JsonObject {
  if (error instanceof NotConnected)
    return { error: (error.record as JsonObject | undefined) ?? { message: "not connected" } };
  return { error: conn.redact(record(error)) as JsonObject };
}
