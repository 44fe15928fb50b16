// OAuth through `tether bridge`: a host starts the bridge with no terminal, the protected server
// answers 401, and the bridge sends the user to the browser (the URL on stderr), finishes the
// sign-in within the discovery budget and answers the host's initialize; a later bridge uses the
// stored token without asking again. Contract IDs: X2 (no token in what the host or stderr sees).

import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { type AuthServer, browser, startAuthServer, startProtectedServer } from "../helpers/auth-server.ts";
import { RawHost } from "../helpers/bridge.ts";
import { eventually } from "../helpers/deadline-servers.ts";
import type { HostileServer } from "../helpers/hostile.ts";

let as: AuthServer;
let mcp: HostileServer;
let config: string;
before(async () => {
  as = await startAuthServer();
  mcp = await startProtectedServer(as, { scopes: ["mcp:read"] });
  config = mkdtempSync(join(tmpdir(), "tether-bridge-oauth-"));
});
after(async () => {
  await mcp.close();
  await as.close();
  rmSync(config, { recursive: true, force: true });
});

test("bridge X2: the host's initialize waits for a browser sign-in; the next bridge uses the stored token", async () => {
  const env = { TETHER_CONFIG_DIR: config, TETHER_CACHE_DIR: join(config, "cache"), TETHER_NO_BROWSER: "1" };
  const first = new RawHost([mcp.url, "--discovery-timeout", "30000"], env);
  try {
    const init = first.initialize();
    assert.ok(
      await eventually(() => /https?:\/\/\S+authorize\S*/.test(first.stderr), 20_000),
      "a sign-in URL",
    );
    const url = /(https?:\/\/\S+authorize\S*)/.exec(first.stderr)![1]!;
    await browser()(url, AbortSignal.timeout(10_000));
    const reply = await init;
    assert.ok(reply.result, JSON.stringify(reply.error));
    const tools = await first.request(2, "tools/list");
    assert.ok(Array.isArray((tools.result as { tools: unknown[] }).tools));
  } finally {
    await first.end();
  }
  const authorizations = as.count("/authorize");
  const second = new RawHost([mcp.url], env);
  try {
    const reply = await second.initialize();
    assert.ok(reply.result, JSON.stringify(reply.error));
    assert.equal(as.count("/authorize"), authorizations, "no second sign-in");
  } finally {
    await second.end();
  }
  for (const secret of as.secrets) {
    assert.ok(!second.stderr.includes(secret));
    assert.ok(!JSON.stringify(second.received).includes(secret));
  }
});
