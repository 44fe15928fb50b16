import assert from "node:assert/strict";
import { test } from "node:test";
import { MAX_CURSOR_CHARS } from "../options/limits.ts";
import { CursorTrail } from "./cursor-trail.ts";

test("S8: a cursor of exactly the bound is followed; one character more is too long", () => {
  const trail = new CursorTrail(MAX_CURSOR_CHARS);
  assert.equal(trail.admit("x".repeat(MAX_CURSOR_CHARS)), "follow");
  assert.equal(trail.admit("y".repeat(MAX_CURSOR_CHARS + 1)), "too_long");
  assert.equal(trail.admit("z".repeat(8 * 1024 * 1024)), "too_long");
});

test("S8: a cursor seen before is a repeat, however many came between", () => {
  const trail = new CursorTrail(MAX_CURSOR_CHARS);
  for (let i = 0; i < 1000; i++) assert.equal(trail.admit(`page-${i}`), "follow");
  assert.equal(trail.admit("page-0"), "repeated");
  assert.equal(trail.admit("page-999"), "repeated");
  assert.equal(trail.admit("page-1000"), "follow");
});

test("S8: cursors that differ only where UTF-8 would blur them (lone surrogates) stay distinct", () => {
  const trail = new CursorTrail(MAX_CURSOR_CHARS);
  assert.equal(trail.admit("a\ud800"), "follow");
  assert.equal(trail.admit("a\udc00"), "follow");
  assert.equal(trail.admit("a\ufffd"), "follow");
  assert.equal(trail.admit("a\ud800"), "repeated");
});

test("S8: any bound is applied the same way: up to it followed, past it too long, seen twice a repeat", () => {
  const trail = new CursorTrail(4);
  assert.equal(trail.admit("a"), "follow");
  assert.equal(trail.admit("abcd"), "follow");
  assert.equal(trail.admit("abcde"), "too_long");
  assert.equal(trail.admit("a"), "repeated");
});
