// Authorization inside the same deadline and byte ceilings: an authorization server that hangs,
// a user who never comes back, and metadata past the ceiling. The deadline tests run on a fake
// clock (`deps.clock`), moved to the deadline once the wait under test has begun.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { connectTo, withProtectedServer } from "../helpers/auth-server.ts";
import { rejection } from "../helpers/failures.ts";
import { fakeClock, until } from "../helpers/fake-clock.ts";

describe("auth: bounded by the discovery deadline", () => {
  test("E1: an authorization server that never answers its metadata ends at the deadline, plus the grace at most", async () => {
    await withProtectedServer({ hangMetadata: true }, {}, async (as, mcp) => {
      const clock = fakeClock();
      const connecting = rejection(
        connectTo(mcp, {
          discovery: { timeoutMs: 1_500 },
          auth: { openUrl: () => assert.fail("never reached"), tokenStore: false },
          deps: { clock },
        }),
      );
      await until(
        () => as.server.requests.some((r) => r.path.startsWith("/.well-known/")),
        20_000,
        "the metadata request arrived",
      );
      await clock.advanceTo(await clock.timer((t) => t.ms === 1_500));
      const e = await connecting;
      assert.equal(e.code, "timeout");
      assert.equal(e.reason, "deadline_exceeded");
      assert.equal(clock.now(), 1_500, "it ended when the deadline fired, no later");
    });
  });

  test("E1: the wait for the loopback redirect is bounded: a user who never returns ends at the deadline", async () => {
    await withProtectedServer({}, {}, async (as, mcp) => {
      const clock = fakeClock();
      let sent = false;
      const connecting = rejection(
        connectTo(mcp, {
          discovery: { timeoutMs: 1_000 },
          auth: {
            openUrl: () => {
              sent = true;
            },
            tokenStore: false,
          },
          deps: { clock },
        }),
      );
      await until(() => sent, 20_000, "the user was sent to sign in");
      await clock.advanceTo(await clock.timer((t) => t.ms === 1_000));
      const e = await connecting;
      assert.equal(e.code, "timeout");
      assert.equal(clock.now(), 1_000, "it ended when the deadline fired, no later");
      assert.equal(as.count("/token"), 0);
    });
  });

  test("E3: the caller's cancellation during sign-in is cancelled, not a timeout", async () => {
    await withProtectedServer({}, {}, async (_as, mcp) => {
      const controller = new AbortController();
      const e = await rejection(
        connectTo(mcp, {
          signal: controller.signal,
          auth: { openUrl: () => controller.abort(new Error("user gave up")), tokenStore: false },
        }),
      );
      assert.equal(e.code, "cancelled");
      assert.equal(e.cancellation, "caller");
    });
  });
});

describe("auth: byte ceilings", () => {
  test("P5: authorization server metadata past the discovery byte ceiling is refused (limit), unread", async () => {
    await withProtectedServer({ metadataBytes: 64 * 1024 }, {}, async (_as, mcp) => {
      const e = await rejection(
        connectTo(mcp, {
          discovery: { maxResponseBytes: 16 * 1024 },
          auth: { openUrl: () => assert.fail("never reached"), tokenStore: false },
        }),
      );
      assert.equal(e.code, "limit");
      assert.equal(e.reason, "response_too_large");
      assert.deepEqual(e.limits, { maxBytes: 16 * 1024 });
      assert.equal(e.observedBytes, 0, "a declared length above the ceiling is refused before reading");
    });
  });

  test("P5: metadata with no declared length is refused as it passes the ceiling, the bytes read reported", async () => {
    await withProtectedServer({ metadataBytes: 64 * 1024, metadataChunked: true }, {}, async (_as, mcp) => {
      const e = await rejection(
        connectTo(mcp, {
          discovery: { maxResponseBytes: 16 * 1024 },
          auth: { openUrl: () => assert.fail("never reached"), tokenStore: false },
        }),
      );
      assert.equal(e.code, "limit");
      assert.ok((e.observedBytes ?? 0) > 16 * 1024, `observed ${e.observedBytes}`);
    });
  });

  test("P5: authorization responses get at most 1 MiB even under a larger phase ceiling", async () => {
    await withProtectedServer({ metadataBytes: 1024 * 1024 + 1 }, {}, async (_as, mcp) => {
      const e = await rejection(
        connectTo(mcp, {
          auth: { openUrl: () => assert.fail("never reached"), tokenStore: false },
        }),
      );
      assert.equal(e.code, "limit");
      assert.deepEqual(e.limits, { maxBytes: 1024 * 1024 });
    });
  });
});
