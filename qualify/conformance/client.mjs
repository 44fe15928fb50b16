// The client the official conformance suite drives: it appends the server URL to our command,
// names the scenario in MCP_CONFORMANCE_SCENARIO and, for some auth scenarios, passes client
// credentials as JSON in MCP_CONFORMANCE_CONTEXT. Runs on the project's own Node (20+) against
// the built package.
import { createPrivateKey } from "node:crypto";
import { connect } from "../../dist/index.js";

const url = process.argv.at(-1);
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? "initialize";
const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? "{}");

/**
 * Stands in for the user's browser: follows the authorization URL's redirects with fetch until
 * the loopback redirect has been delivered (the suite's authorization server approves at once).
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

const auth = {
  // The suite's fixed client ID metadata document URL, used where the server supports them.
  clientMetadataUrl: "https://conformance-test.local/client-metadata.json",
  clientId: context.client_id,
  clientSecret: context.client_secret,
  privateKeyJwk: context.private_key_pem
    ? createPrivateKey(context.private_key_pem).export({ format: "jwk" })
    : undefined,
  grant: scenario.startsWith("auth/client-credentials") ? "client_credentials" : "authorization_code",
  openUrl: followInBrowser,
  tokenStore: false,
};

const client = await connect({
  url,
  eraHints: false,
  timeoutMs: 20_000,
  auth,
  handlers: {
    // Accept with whatever the schema defaults to: tether fills omitted fields from defaults.
    elicitation: () => ({ action: "accept", content: {} }),
  },
});
try {
  const tools = await client.listTools();
  if (scenario === "tools_call") {
    await client.callTool("add_numbers", { a: 5, b: 3 });
  } else if (scenario !== "initialize") {
    // Other scenarios expose one tool each that exercises the behaviour under test.
    for (const tool of tools) await client.callTool(tool.name, {});
  }
} finally {
  await client.close();
}
