import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { cutToWidth, displayWidth } from "./display-width.ts";
import { PLAIN, renderCall, renderList, shareWidths, table } from "./render.ts";

describe("human output", () => {
  test("K1: wide characters count two columns, combining marks none", () => {
    assert.equal(displayWidth("abc"), 3);
    assert.equal(displayWidth("日本語"), 6);
    assert.equal(displayWidth("🚀x"), 3);
    assert.equal(displayWidth("e\u0301"), 1);
    assert.equal(cutToWidth("日本語テキスト", 7), "日本語…");
    assert.equal(displayWidth(cutToWidth("日本語テキスト", 7)), 7);
  });

  test("K1: off a terminal nothing is cut, however long", () => {
    const uri = `demo://${"x".repeat(200)}`;
    const out = table(["URI", "NAME"], [[uri, "n"]], PLAIN);
    assert.ok(out.includes(uri));
    assert.ok(!out.includes("…"));
  });

  test("K1: on a terminal the width is shared out by content; short columns keep their whole width", () => {
    assert.deepEqual(shareWidths([4, 10], 80), [4, 10]);
    const widths = shareWidths([4, 100, 100], 80);
    assert.equal(widths[0], 4);
    assert.equal(widths.reduce((a, b) => a + b, 0) + 4, 80);
    const out = table(["NAME", "DESCRIPTION"], [["短い名前", "長い説明".repeat(30)]], {
      color: false,
      columns: 40,
    });
    for (const line of out.trimEnd().split("\n")) assert.ok(displayWidth(line) <= 40, line);
    assert.match(out, /…/);
  });

  test("K1: an image's size is its decoded size, base64 padding aside", () => {
    const data = Buffer.from([1, 2, 3, 4]).toString("base64");
    assert.equal(data, "AQIDBA==");
    assert.match(renderCall({ content: [{ type: "image", mimeType: "image/png", data }] }), /4 bytes/);
  });

  test("K1: prompts show their arguments, optional ones marked", () => {
    const out = renderList(
      [{ name: "greet", description: "d", arguments: [{ name: "name", required: true }, { name: "tone" }] }],
      "name",
    );
    assert.match(out, /greet\s+name, tone\?\s+d/);
  });

  test("S1: cells still pass the terminal sanitizer", () => {
    const out = table(["A"], [[`x${String.fromCharCode(27)}[31mred`]], PLAIN);
    assert.ok(!out.includes(String.fromCharCode(27)));
  });
});
