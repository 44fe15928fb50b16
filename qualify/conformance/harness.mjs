// What every scenario handler is given: the scenario as the suite described it, tether as users
// get it (its public entry point only), and the few habits the handlers share. A handler is
// `async (ctx) => void`; it throws to make the client exit non-zero.
import { createPrivateKey } from "node:crypto";
import { isAbsolute, resolve } from "node:path";
import { pathToFileURL } from "node:url";

/**
 * Where tether is loaded from: TETHER_CONFORMANCE_LIB (a path or file URL of the package's entry
 * point; `npm run qualify` points it at the installed tarball), else the checkout's dist/.
 */
function libraryUrl() {
  const given = process.env.TETHER_CONFORMANCE_LIB;
  if (!given) return new URL("../../dist/index.js", import.meta.url).href;
  if (given.startsWith("file:")) return given;
  return pathToFileURL(isAbsolute(given) ? given : resolve(given)).href;
}

/**
 * Stands in for the user's browser: follows the authorization URL's redirects with fetch until
 * the loopback redirect has been delivered (the suite's authorization servers approve at once).
 */
async function followInBrowser(authorizationUrl, signal) {
  let next = authorizationUrl;
  for (let hops = 0; hops < 5; hops++) {
    const response = await fetch(next, { redirect: "manual", signal });
    await response.body?.cancel();
    const location = response.headers.get("location");
    if (response.status < 300 || response.status >= 400 || !location) return;
    next = new URL(location, next).href;
  }
}

/** The suite's fixed client ID metadata document URL, used where a server supports them. */
export const CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json";

/** What a host answers when a server asks: used by the scenarios that want them declared. */
export const HOST_HANDLERS = {
  // Accept with nothing filled in: tether fills omitted fields from the schema's defaults.
  elicitation: () => ({ action: "accept", content: {} }),
  sampling: () => ({
    role: "assistant",
    content: { type: "text", text: "conformance client reply" },
    model: "tether-conformance",
    stopReason: "endTurn",
  }),
  roots: () => ({ roots: [{ uri: "file:///tmp/tether-conformance", name: "conformance workspace" }] }),
};

export async function createContext() {
  const lib = libraryUrl();
  const tether = await import(lib);
  const url = process.argv.at(-1);
  const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? "initialize";
  const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? "{}");
  // The spec version the suite runs the scenario at. The newest suite sets it; for 0.1.16 the
  // runner (run.mjs) sets it from the scenario's listed versions.
  const given = process.env.MCP_CONFORMANCE_PROTOCOL_VERSION;
  const specVersion = tether.KNOWN_VERSIONS.includes(given) ? given : undefined;

  const log = (...parts) => process.stderr.write(`[client] ${parts.join(" ")}\n`);
  log(`scenario ${scenario}, spec version ${given ?? "(none)"}`);
  log(`tether from ${lib}`);

  /**
   * tether as an application would configure it for this run: the spec version under test is the
   * ceiling (so a 2025-11-25 run speaks as a 2025-11-25 client, and a 2026-07-28 run negotiates
   * with server/discover first, falling back to initialize where the server is older).
   */
  function connectOptions(extra = {}) {
    return {
      url,
      eraHints: false,
      timeoutMs: 20_000,
      clientInfo: { name: "tether-conformance", version: "1.0.0" },
      ...(specVersion ? { maxProtocolVersion: specVersion } : {}),
      ...extra,
    };
  }

  /** Connects, runs `body` with the client, and always closes. */
  async function session(extra, body) {
    const client = await tether.connect(connectOptions(extra));
    log(`connected: ${client.era} ${client.protocolVersion} over ${client.transportMode}`);
    try {
      return await body(client);
    } finally {
      await client.close();
    }
  }

  /**
   * AuthOptions for the suite's authorization servers: the browser stand-in, no token kept past
   * this run, the metadata document URL, and whatever credentials the scenario handed over.
   */
  function authOptions(extra = {}) {
    return {
      clientMetadataUrl: CLIENT_METADATA_URL,
      clientId: context.client_id,
      clientSecret: context.client_secret,
      privateKeyJwk: context.private_key_pem
        ? createPrivateKey(context.private_key_pem).export({ format: "jwk" })
        : undefined,
      openUrl: followInBrowser,
      tokenStore: false,
      ...extra,
    };
  }

  return { tether, url, scenario, context, specVersion, log, connectOptions, session, authOptions };
}
