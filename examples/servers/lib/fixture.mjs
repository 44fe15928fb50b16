// The tools, resource and prompt every example server exposes, independent of any SDK version,
// so tests can rely on identical behaviour across eras and transports.

export const SERVER_INFO = { name: "tether-example", version: "0.1.0" };

// Guards `big` against a typo exhausting the server's memory; large enough to trip any byte ceiling.
export const MAX_BIG_BYTES = 256 * 1024 * 1024;

const object = (properties = {}, required = Object.keys(properties)) => ({
  type: "object",
  properties,
  required,
});

export const TOOLS = [
  {
    name: "echo",
    description: "Returns the message unchanged.",
    inputSchema: object({ message: { type: "string" } }),
  },
  {
    name: "add",
    description: "Returns the sum of a and b.",
    inputSchema: object({ a: { type: "number" }, b: { type: "number" } }),
  },
  {
    name: "slow",
    description: "Waits ms milliseconds, then returns 'done'. Stops early when the request is cancelled.",
    inputSchema: object({ ms: { type: "integer", minimum: 0 } }),
  },
  {
    name: "big",
    description: "Returns one text content of exactly `bytes` ASCII 'x' characters.",
    inputSchema: object({ bytes: { type: "integer", minimum: 0, maximum: MAX_BIG_BYTES } }),
  },
  {
    name: "fail",
    description: "Always returns a tool error.",
    inputSchema: object(),
  },
  {
    name: "whoami",
    description: "Returns the HTTP request headers the server saw, as JSON ('{}' on stdio).",
    inputSchema: object(),
  },
];

export const GREETING = { uri: "demo://greeting", name: "greeting", mimeType: "text/plain", text: "hello" };

export const GREET_PROMPT = {
  name: "greet",
  description: "Greets someone by name.",
  arguments: [{ name: "name", description: "Who to greet", required: true }],
};

export function greetMessages(name) {
  return [{ role: "user", content: { type: "text", text: `Hello, ${name}!` } }];
}

const text = (value) => ({ content: [{ type: "text", text: value }] });
const toolError = (message) => ({ content: [{ type: "text", text: message }], isError: true });

function invalidParams(message) {
  // The SDKs' protocol layers copy a numeric `code` from a thrown error into the JSON-RPC error.
  return Object.assign(new Error(message), { code: -32602 });
}

function abortableDelay(ms, signal) {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new Error("cancelled"));
    const onAbort = () => {
      clearTimeout(timer);
      reject(new Error("cancelled"));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

const isInteger = (value, max = Number.MAX_SAFE_INTEGER) =>
  Number.isInteger(value) && value >= 0 && value <= max;

/**
 * Runs one tool call. `signal` aborts `slow`; `headers` is the HTTP request header object
 * (lower-case names) that `whoami` reports. Unknown tools throw a -32602 error.
 */
export async function callTool(name, args = {}, { signal, headers } = {}) {
  switch (name) {
    case "echo":
      if (typeof args.message !== "string") return toolError("echo: message must be a string");
      return text(args.message);
    case "add":
      if (typeof args.a !== "number" || typeof args.b !== "number") {
        return toolError("add: a and b must be numbers");
      }
      return text(String(args.a + args.b));
    case "slow":
      if (!isInteger(args.ms)) return toolError("slow: ms must be a non-negative integer");
      await abortableDelay(args.ms, signal);
      return text("done");
    case "big":
      if (!isInteger(args.bytes, MAX_BIG_BYTES)) {
        return toolError(`big: bytes must be an integer from 0 to ${MAX_BIG_BYTES}`);
      }
      return text("x".repeat(args.bytes));
    case "fail":
      return toolError("tool failed on purpose");
    case "whoami":
      return text(JSON.stringify(headers ?? {}));
    default:
      throw invalidParams(`Unknown tool: ${name}`);
  }
}

/**
 * Installs the fixture on a low-level `Server` of the v1 SDK line (1.0.4, 1.13.3, 1.32.2), whose
 * `setRequestHandler` takes the request schemas from that version's own `types.js`.
 * `headersOf(extra)` returns the HTTP headers of the request being handled.
 */
export function installOnV1Server(server, types, headersOf = () => ({})) {
  server.setRequestHandler(types.ListToolsRequestSchema, () => ({ tools: TOOLS }));
  server.setRequestHandler(types.CallToolRequestSchema, (request, extra) =>
    callTool(request.params.name, request.params.arguments, {
      signal: extra.signal,
      headers: headersOf(extra),
    }),
  );
  server.setRequestHandler(types.ListResourcesRequestSchema, () => ({
    resources: [{ uri: GREETING.uri, name: GREETING.name, mimeType: GREETING.mimeType }],
  }));
  server.setRequestHandler(types.ReadResourceRequestSchema, (request) => {
    if (request.params.uri !== GREETING.uri) throw invalidParams(`Unknown resource: ${request.params.uri}`);
    return { contents: [{ uri: GREETING.uri, mimeType: GREETING.mimeType, text: GREETING.text }] };
  });
  server.setRequestHandler(types.ListPromptsRequestSchema, () => ({ prompts: [GREET_PROMPT] }));
  server.setRequestHandler(types.GetPromptRequestSchema, (request) => {
    if (request.params.name !== GREET_PROMPT.name)
      throw invalidParams(`Unknown prompt: ${request.params.name}`);
    const name = request.params.arguments?.name;
    if (typeof name !== "string") throw invalidParams("greet: argument name is required");
    return { messages: greetMessages(name) };
  });
  return server;
}

export const V1_CAPABILITIES = { tools: {}, resources: {}, prompts: {} };
