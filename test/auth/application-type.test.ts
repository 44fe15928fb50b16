// application_type in dynamic client registration: a version after 2025-11-25 requires it, and a
// CLI on the user's machine with a loopback redirect is `native`; older versions leave it out;
// the caller's choice wins either way.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { MemoryTokenStore } from "../../src/index.ts";
import { type AuthServer, browser, connectTo, protectedServerForSuite } from "../helpers/auth-server.ts";
import type { HostileServer } from "../helpers/hostile.ts";

describe("auth: application_type in dynamic registration", () => {
  let as: AuthServer;
  let mcp: HostileServer;
  protectedServerForSuite((a, m) => ([as, mcp] = [a, m]));

  async function register(extra: Record<string, unknown>, auth: Record<string, unknown> = {}) {
    const before = as.applicationTypes.length;
    const client = await connectTo(mcp, {
      ...extra,
      auth: { openUrl: browser(), tokenStore: new MemoryTokenStore(), ...auth },
    });
    await client.close();
    assert.equal(as.applicationTypes.length, before + 1, "one registration");
    return as.applicationTypes.at(-1);
  }

  test("N1: a client that may speak 2026-07-28 registers as native", async () => {
    assert.equal(await register({}), "native");
  });

  test("N1: a client held to 2025-11-25 leaves application_type out", async () => {
    assert.equal(await register({ maxProtocolVersion: "2025-11-25" }), undefined);
  });

  test("N1: the caller's application_type is sent for any version", async () => {
    assert.equal(await register({ maxProtocolVersion: "2025-06-18" }, { applicationType: "web" }), "web");
  });
});
