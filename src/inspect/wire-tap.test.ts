// The explorer's wire tap: every line between the explorer and a stdio server, as it crossed,
// while the child's own streams work as they do (a real child process).
import assert from "node:assert/strict";
import { once } from "node:events";
import { test } from "node:test";
import { KEEP, tappedSpawn } from "./wire-tap.ts";

const CHILD = `
process.stdin.setEncoding("utf8");
let got = "";
process.stdin.on("data", (d) => { got += d; });
process.stdin.on("end", () => {
  process.stdout.write("first\\r\\nsec");
  process.stdout.write("ond\\n" + "z".repeat(100000) + "\\n");
  process.stdout.write(JSON.stringify(got) + "\\n");
});
`;

test("S9: the tap hears each line in and out, a long one cut with its whole size, and the streams still carry everything", async () => {
  const heard: [string, string, number][] = [];
  const spawn = tappedSpawn((dir, text, bytes) => heard.push([dir, text, bytes]));
  const child = spawn(process.execPath, ["-e", CHILD], { stdio: ["pipe", "pipe", "ignore"] });
  let stdout = "";
  child.stdout!.on("data", (d: Buffer) => {
    stdout += d.toString("utf8");
  });
  child.stdin!.write("a\nb");
  child.stdin!.write(Buffer.from("c\n"));
  child.stdin!.end();
  await once(child, "close");
  assert.deepEqual(
    heard.filter(([dir]) => dir === "out"),
    [
      ["out", "a", 1],
      ["out", "bc", 2],
    ],
  );
  const incoming = heard.filter(([dir]) => dir === "in");
  assert.deepEqual(incoming[0], ["in", "first", 6]);
  assert.deepEqual(incoming[1], ["in", "second", 6]);
  assert.equal(incoming[2]![1].length, KEEP);
  assert.equal(incoming[2]![2], 100000);
  assert.deepEqual(incoming[3], ["in", JSON.stringify("a\nbc\n"), 9]);
  assert.ok(stdout.endsWith(`${JSON.stringify("a\nbc\n")}\n`), "the child's own reader got everything");
});

test("S9: a listener that throws breaks nothing", async () => {
  const spawn = tappedSpawn(() => {
    throw new Error("boom");
  });
  const child = spawn(process.execPath, ["-e", CHILD], { stdio: ["pipe", "pipe", "ignore"] });
  let stdout = "";
  child.stdout!.on("data", (d: Buffer) => {
    stdout += d.toString("utf8");
  });
  child.stdin!.end("x\n");
  const [code] = await once(child, "close");
  assert.equal(code, 0);
  assert.ok(stdout.endsWith(`${JSON.stringify("x\n")}\n`));
});
