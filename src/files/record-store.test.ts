import assert from "node:assert/strict";
import {
  chmodSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { MemoryRecords, RecordFile } from "./record-store.ts";

const folder = () => mkdtempSync(join(tmpdir(), "tether-records-"));
const all = <T>(entries: [string, T][]) => entries;

test("a record file reads what today's token and era-hint files hold, and writes the same format", () => {
  const dir = folder();
  const tokens = join(dir, "auth.json");
  writeFileSync(tokens, '{"version":1,"records":{"server a":{"kind":"client","clientId":"c","issuer":"i"}}}');
  const file = new RecordFile<unknown>(tokens, { field: "records", keep: all });
  assert.deepEqual(file.read(), { "server a": { kind: "client", clientId: "c", issuer: "i" } });
  file.write({ ...file.read(), b: 2 });
  assert.equal(
    readFileSync(tokens, "utf8"),
    '{"version":1,"records":{"server a":{"kind":"client","clientId":"c","issuer":"i"},"b":2}}',
  );
  const hints = join(dir, "era-hints.json");
  writeFileSync(hints, '{"version":1,"hints":{"k":{"era":"legacy","mode":"stdio","at":5}}}');
  assert.deepEqual(new RecordFile(hints, { field: "hints", keep: all }).read(), {
    k: { era: "legacy", mode: "stdio", at: 5 },
  });
  assert.deepEqual(
    new RecordFile(hints, { field: "records", keep: all }).read(),
    {},
    "another field is not read",
  );
});

test("a missing, torn or other-version file reads as empty", () => {
  const dir = folder();
  const path = join(dir, "f.json");
  const file = new RecordFile(path, { field: "records", keep: all });
  assert.deepEqual(file.read(), {}, "missing");
  for (const text of [
    '{"version":1,"rec',
    '{"version":2,"records":{"a":1}}',
    "null",
    '{"version":1,"records":null}',
    "7",
  ]) {
    writeFileSync(path, text);
    assert.deepEqual(file.read(), {}, text);
  }
});

test("writes keep what the bound keeps, and a delete of an absent key writes nothing", () => {
  const dir = folder();
  const path = join(dir, "f.json");
  const file = new RecordFile<number>(path, { field: "records", keep: (e) => e.slice(-2) });
  file.write({ a: 1, b: 2, c: 3 });
  assert.deepEqual(file.read(), { b: 2, c: 3 });
  file.delete("b");
  assert.deepEqual(file.read(), { c: 3 });
  const absent = new RecordFile<number>(join(dir, "never.json"), { field: "records", keep: all });
  absent.delete("x");
  assert.equal(existsSync(absent.path), false, "no file was made to delete nothing");
  assert.deepEqual(readdirSync(dir), ["f.json"], "no temporary file left behind");
});

test("an owner-only file is tightened when read, and another is left as it is", {
  skip: process.platform === "win32",
}, () => {
  const dir = folder();
  const secret = join(dir, "secret.json");
  const cache = join(dir, "cache.json");
  for (const path of [secret, cache]) {
    writeFileSync(path, '{"version":1,"records":{}}');
    chmodSync(path, 0o644);
  }
  new RecordFile(secret, { field: "records", keep: all, ownerOnly: true }).read();
  new RecordFile(cache, { field: "records", keep: all }).read();
  assert.equal(statSync(secret).mode & 0o777, 0o600);
  assert.equal(statSync(cache).mode & 0o777, 0o644);
});

test("a failed write throws, unless the file is quiet about it", () => {
  const dir = folder();
  const blocker = join(dir, "not-a-folder");
  writeFileSync(blocker, "");
  const path = join(blocker, "f.json");
  assert.throws(() => new RecordFile(path, { field: "records", keep: all }).write({ a: 1 }));
  new RecordFile(path, { field: "records", keep: all, quiet: true }).write({ a: 1 });
  const failingBound = new RecordFile<number>(join(dir, "g.json"), {
    field: "records",
    keep: () => {
      throw new Error("bound");
    },
    quiet: true,
  });
  failingBound.write({ a: 1 });
  assert.equal(existsSync(failingBound.path), false);
});

test("memory records are kept by key until deleted", () => {
  const records = new MemoryRecords<number>();
  records.set("a", 1);
  records.set("a", 2);
  assert.equal(records.get("a"), 2);
  records.delete("a");
  assert.equal(records.get("a"), undefined);
});
