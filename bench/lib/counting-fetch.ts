/**
 * A fetch that counts what goes on the wire, by method, for the client it is handed to. Both our
 * client (`deps.fetch`) and the official transports (`fetch` option) take one, so the counts are
 * taken the same way on both sides.
 */
export interface WireCount {
  post: number;
  get: number;
  delete: number;
  /** JSON-RPC methods of the POSTs, in order (for the report's "what was sent" line). */
  methods: string[];
}

export function newWireCount(): WireCount {
  return { post: 0, get: 0, delete: 0, methods: [] };
}

function methodOf(body: unknown): string {
  if (typeof body !== "string") return "?";
  try {
    const message = JSON.parse(body) as { method?: unknown; result?: unknown; error?: unknown };
    if (typeof message.method === "string") return message.method;
    return "response";
  } catch {
    return "?";
  }
}

export function countingFetch(count: WireCount, inner: typeof fetch = fetch): typeof fetch {
  return ((input: string | URL | Request, init?: RequestInit) => {
    const method = (init?.method ?? (input instanceof Request ? input.method : "GET")).toUpperCase();
    if (method === "POST") {
      count.post++;
      count.methods.push(methodOf(init?.body));
    } else if (method === "GET") count.get++;
    else if (method === "DELETE") count.delete++;
    return inner(input, init);
  }) as typeof fetch;
}

/** Establishment-time requests in the report's notation: `4 POST + 1 GET`. */
export function formatWire(count: Pick<WireCount, "post" | "get">): string {
  return count.get > 0 ? `${count.post} POST + ${count.get} GET` : `${count.post} POST`;
}
