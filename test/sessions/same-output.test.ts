// A call on @NAME writes the same bytes and exits the same way whichever path runs it: the
// one-request path (`call @NAME TOOL ... --flag`) and the whole CLI (the same call with its flag
// before the target, which the one-request path does not take).
import assert from "node:assert/strict";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { sandboxFor, startStateful } from "./sandbox.ts";

const URL_REQUIRED = fileURLToPath(
  new URL("../fixtures/url-elicitation/required-server.mjs", import.meta.url),
);

test("K1: a call on @NAME writes what the whole CLI writes: results, refusals, timeouts, ceilings, a session that is not there", async (t) => {
  const box = sandboxFor(t);
  // No session process at all yet.
  const both = async (
    target: string,
    words: string[],
    flag: [string, string] = ["--call-timeout", "30000"],
  ) => {
    const [fast, whole] = await Promise.all([
      box.run(["call", target, ...words, ...flag]),
      box.run(["call", ...flag, target, ...words]),
    ]);
    const what = `call ${target} ${words.join(" ")} ${flag.join(" ")}`;
    assert.equal(fast.stdout, whole.stdout, `stdout of ${what}`);
    assert.equal(fast.stderr, whole.stderr, `stderr of ${what}`);
    assert.equal(fast.code, whole.code, `exit status of ${what}`);
    return fast;
  };
  assert.equal((await both("@s", ["echo", "message=hi"])).code, 3);
  await startStateful(box, "s");
  assert.equal((await both("@s", ["echo", "message=hi"])).stdout, "hi\n");
  await both("@s", ["echo", '{"message":"as json"}']);
  await both("@s", ["set", "key=k", "value:=3"]);
  assert.equal((await both("@s", ["echo", "mesage=hi"])).code, 2);
  assert.equal((await both("@s", ["ecko", "message=hi"])).code, 2);
  assert.equal((await both("@other", ["echo", "message=hi"])).code, 3);
  assert.equal((await both("@s", ["slow"], ["--call-timeout", "300"])).code, 4);
  assert.equal(
    (await both("@s", ["echo", `message=${"x".repeat(4_000)}`], ["--call-max-bytes", "1000"])).code,
    5,
  );
  const json = await Promise.all([
    box.run(["call", "@s", "echo", "message=hi", "--json"]),
    box.run(["call", "--json", "@s", "echo", "message=hi"]),
  ]);
  assert.equal(json[0].stdout, json[1].stdout);
  assert.equal(json[0].code, 0);
  assert.equal((await box.run(["session", "stop", "s"])).code, 0);
});

test("R8: a -32042 on @NAME is the record a one-shot call writes, the count of required URLs with it", async (t) => {
  const box = sandboxFor(t);
  const server = ["--", process.execPath, URL_REQUIRED];
  const start = await box.run(["session", "start", "u", "--json", ...server]);
  assert.equal(start.code, 0, start.stderr);
  box.pids.add((JSON.parse(start.stdout) as { daemonPid: number }).daemonPid);
  try {
    const [fast, whole, oneShot] = await Promise.all([
      box.run(["call", "@u", "sign-in-first"]),
      box.run(["call", "--call-timeout", "30000", "@u", "sign-in-first"]),
      box.run(["call", "sign-in-first", "--call-timeout", "30000", ...server]),
    ]);
    for (const run of [fast, whole]) {
      assert.equal(run.code, 7, run.stderr);
      const record = JSON.parse(run.stderr) as Record<string, unknown>;
      assert.equal(record.rpcCode, -32042);
      assert.equal(record.urlsRequired, 1);
      assert.doesNotMatch(run.stderr, /auth\.example\.com/);
    }
    assert.equal(fast.stderr, whole.stderr);
    assert.equal(oneShot.stderr, fast.stderr);
  } finally {
    await box.run(["session", "stop", "u"]);
  }
});
