// MCP Apps (SEP-1865) in a real browser, through the harness page (harness.ts): the page half of
// the apps module mounts each app in a sandboxed frame served by the apps listener, and speaks
// the host protocol with it. Against @modelcontextprotocol/server-basic-vanillajs (the official
// example, its SDK-built app) and the probing fixture (test/fixtures/apps/apps-server.mjs).
// Chromium from the system, headless; screenshots in .test-artifacts/apps/.

import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { Browser } from "playwright-core";
import { APPS_EXTENSIONS } from "../../src/inspect/apps/resource.ts";
import { launchBrowser } from "../helpers/inspect.ts";
import {
  APPS_FIXTURE,
  ARTIFACTS,
  activities,
  BASIC_VANILLAJS,
  type Harness,
  openApp,
  startHarness,
  waitForActivity,
  waitForLog,
} from "./harness.ts";

let browser: Browser;
before(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
});

const FRAME = "iframe.mcp-app-frame";

describe("server-basic-vanillajs", () => {
  let harness: Harness;
  before(async () => {
    harness = await startHarness({ args: [BASIC_VANILLAJS, "--stdio"], extensions: APPS_EXTENSIONS });
  });
  after(async () => {
    await harness?.close();
  });

  test("S9: its app renders in the sandboxed frame with the tool's result, and its button calls a tool through the host", async () => {
    const page = await browser.newPage();
    try {
      const opened = await openApp(page, harness, "get-time");
      assert.ok(opened.url.startsWith(`${harness.frames.origin}/app/`), opened.url);
      const frame = page.frameLocator(FRAME);
      const time = frame.locator("#server-time");
      // The result of the call the harness made reaches the app as ui/notifications/tool-result.
      await time.filter({ hasText: /^\d{4}-\d\d-\d\dT/ }).waitFor();
      const first = await time.textContent();
      await page.screenshot({ path: join(ARTIFACTS, "basic-vanillajs.png"), fullPage: true });
      await frame.locator("#get-time-btn").click();
      await time.filter({ hasNotText: first! }).waitFor();
      assert.match((await time.textContent())!, /^\d{4}-\d\d-\d\dT/);
      const calls = (await activities(page)).filter((a) => a.kind === "call");
      assert.deepEqual(
        calls.map((c) => [c.name, c.ok]),
        [["get-time", true]],
      );
      // The app reports its size; the frame takes that height (from its first 150 px). Read at once,
      // the last report and the frame's height agree.
      await waitForActivity(page, "size");
      const { reported, height } = await page.evaluate(() => {
        const g = globalThis as unknown as {
          appActivity: { kind: string; height?: number }[];
          document: { querySelector(s: string): { style: { height: string } } };
        };
        const sizes = g.appActivity.filter((a) => a.kind === "size");
        return {
          reported: sizes[sizes.length - 1]!.height,
          height: g.document.querySelector("iframe.mcp-app-frame").style.height,
        };
      });
      assert.equal(height, `${reported}px`);
      assert.notEqual(height, "150px");
      const sandbox = await page.locator(FRAME).getAttribute("sandbox");
      assert.equal(sandbox, "allow-scripts allow-forms");
    } finally {
      await page.close();
    }
  });
});

describe("the probing app", () => {
  let harness: Harness;
  const secret = "sk-apps-fixture-secret-4f1c9a";
  before(async () => {
    harness = await startHarness({ args: [APPS_FIXTURE], env: { TETHER_APPS_SECRET: secret } });
  });
  after(async () => {
    await harness?.close();
  });

  test("S9: cannot read or touch the page, has an opaque origin, and gets the declared CSP as its document's header", async () => {
    const page = await browser.newPage();
    try {
      const frameResponse = page.waitForResponse((r) => r.url().startsWith(`${harness.frames.origin}/app/`));
      const opened = await openApp(page, harness, "probe", { n: 1, target: `${harness.origin}/` });
      const response = await frameResponse;
      const expected =
        "default-src 'none'; " +
        "script-src 'unsafe-inline' https://cdn.example.com https://*.assets.example.com; " +
        "style-src 'unsafe-inline' https://cdn.example.com https://*.assets.example.com; " +
        "img-src data: https://cdn.example.com https://*.assets.example.com; " +
        "font-src data: https://cdn.example.com https://*.assets.example.com; " +
        "media-src data: https://cdn.example.com https://*.assets.example.com; " +
        "connect-src https://api.example.com; frame-src 'none'; object-src 'none'; base-uri 'none'; " +
        `form-action 'none'; frame-ancestors ${harness.origin}; sandbox allow-scripts allow-forms`;
      assert.equal(response.headers()["content-security-policy"], expected);
      assert.equal(opened.csp, expected);
      assert.deepEqual(opened.refused, ["frameDomains: https://frames.example.com; script-src *"]);

      const frame = page.frameLocator(FRAME);
      await frame.locator("#result").filter({ hasText: "probed 2" }).waitFor();
      const found = await waitForLog(page, "probe");
      assert.equal(found.origin, "null");
      // Nothing before initialized; then the input, then the result (the log comes after both).
      assert.deepEqual(found.received, ["ui/notifications/tool-input", "ui/notifications/tool-result"]);
      assert.equal(
        (await activities(page)).filter((a) => a.kind === "log" && "early" in (a.data as object)).length,
        0,
      );
      assert.match(String(found.parentCanary), /^blocked SecurityError/);
      assert.match(String(found.parentWrite), /^blocked SecurityError/);
      assert.match(String(found.parentDom), /^blocked SecurityError/);
      assert.match(String(found.cookie), /^blocked SecurityError/);
      assert.match(String(found.storage), /^blocked SecurityError/);
      assert.match(String(found.fetch), /^blocked TypeError/);
      // Blocked by the frame's CSP, not by anything else on the way.
      await waitForLog(page, "violation", "connect-src");
      assert.equal(
        await page.evaluate(() => (globalThis as unknown as { canaryTouched?: boolean }).canaryTouched),
        undefined,
      );
      assert.equal(
        await page.evaluate(() => (globalThis as unknown as { canary: string }).canary),
        harness.canary,
      );
      // The server put a secret of the connection in the document: the frame shows it redacted.
      assert.equal(await frame.locator("#secret").textContent(), "[redacted]");
      assert.deepEqual(await waitForLog(page, "initialized"), {
        initialized: "2026-01-26",
        host: "tether inspect",
        tool: "probe",
        // What the host approved of the declaration, told to the app.
        csp: {
          connectDomains: ["https://api.example.com"],
          resourceDomains: ["https://cdn.example.com", "https://*.assets.example.com"],
          frameDomains: [],
          baseUriDomains: [],
        },
      });
      await page.screenshot({ path: join(ARTIFACTS, "probe.png"), fullPage: true });
    } finally {
      await page.close();
    }
  });

  test("calls only the tools the server lets apps call, through the host", async () => {
    const page = await browser.newPage();
    try {
      await openApp(page, harness, "probe", { n: 1 });
      const frame = page.frameLocator(FRAME);
      await waitForLog(page, "probe");
      await frame.locator("#call").click();
      await frame.locator("#called").filter({ hasText: "probed 4" }).waitFor();
      // visibility ["model"]: refused by the host, never sent to the server.
      await frame.locator("#call-model-only").click();
      await frame
        .locator("#called")
        .filter({ hasText: "refused: the server does not let apps call model-only" })
        .waitFor();
      // The harness gives the host no way to read resources: the app is told so.
      await frame.locator("#read").click();
      await frame
        .locator("#called")
        .filter({ hasText: "refused: this host does not read resources for apps" })
        .waitFor();
      // Past the message bound: refused by the host, never sent to the server.
      await frame.locator("#big").click();
      await frame.locator("#called").filter({ hasText: "refused: message too large" }).waitFor();
      const calls = (await activities(page)).filter((a) => a.kind === "call");
      assert.deepEqual(
        calls.map((c) => [c.name, c.ok]),
        [["probe", true]],
      );
    } finally {
      await page.close();
    }
  });

  test("opens a link only once the user said yes", async () => {
    const page = await browser.newPage();
    try {
      const link = `${harness.origin}/landing`;
      await openApp(page, harness, "probe", { n: 1, link });
      const frame = page.frameLocator(FRAME);
      await waitForLog(page, "probe");
      const messages: string[] = [];
      page.once("dialog", (d) => {
        messages.push(d.message());
        void d.dismiss();
      });
      await frame.locator("#link").click();
      assert.deepEqual(await waitForLog(page, "link"), { link: "refused: Link opening denied by user" });
      assert.match(messages[0]!, new RegExp(`${link.replace(/[.]/g, "\\.")}`));
      assert.equal(page.context().pages().length, 1);

      page.once("dialog", (d) => void d.accept());
      const popup = page.context().waitForEvent("page");
      await frame.locator("#link").click();
      const opened = await popup;
      await opened.waitForURL(link);
      const linkActivities = (await activities(page)).filter((a) => a.kind === "link");
      assert.deepEqual(
        linkActivities.map((a) => [a.url, a.opened]),
        [
          [link, false],
          [link, true],
        ],
      );
      await opened.close();
    } finally {
      await page.close();
    }
  });

  test("an app that floods the page is closed, and so is one whose frame navigates away", async () => {
    const page = await browser.newPage();
    try {
      await openApp(page, harness, "probe", { n: 1 });
      await waitForLog(page, "probe");
      const started = performance.now();
      await page.frameLocator(FRAME).locator("#flood").click();
      assert.deepEqual(await waitForActivity(page, "closed"), {
        kind: "closed",
        why: "the app flooded the page with messages",
      });
      assert.equal(await page.locator(FRAME).count(), 0);
      const logs = (await activities(page)).filter((a) => a.kind === "log" && a.level === "debug");
      // The burst (200) and what the rate (100 a second) refills while the flood lasts, however slow
      // the machine; never the 5000 sent.
      const allowed = 200 + Math.ceil(((performance.now() - started) / 1000) * 100);
      assert.ok(logs.length <= allowed, `${logs.length} flood messages got through, over ${allowed}`);
      assert.ok(logs.length < 5000);

      await openApp(page, harness, "probe", { n: 1 });
      await waitForLog(page, "probe");
      await page.frameLocator(FRAME).locator("#navigate").click();
      assert.deepEqual(await waitForActivity(page, "closed"), {
        kind: "closed",
        why: "the app's frame navigated away",
      });
      assert.equal(await page.locator(FRAME).count(), 0);
    } finally {
      await page.close();
    }
  });

  test("a change of theme or of the frame's width is told to the app as host-context-changed", async () => {
    const page = await browser.newPage({ viewport: { width: 1000, height: 700 } });
    try {
      await openApp(page, harness, "probe", { n: 1 });
      await waitForLog(page, "probe");
      await page.emulateMedia({ colorScheme: "dark" });
      assert.deepEqual(await waitForLog(page, "hostContext"), { hostContext: { theme: "dark" } });
      await page.setViewportSize({ width: 700, height: 700 });
      const width = await page.locator(FRAME).evaluate((f) => Math.round(f.getBoundingClientRect().width));
      const sized = await page.waitForFunction(
        (w) =>
          (
            globalThis as unknown as {
              appActivity: {
                kind: string;
                data?: { hostContext?: { containerDimensions?: { width: number } } };
              }[];
            }
          ).appActivity
            .map((a) => a.data?.hostContext?.containerDimensions)
            .find((d) => d?.width === w),
        width,
      );
      assert.deepEqual(await sized.jsonValue(), { width, maxHeight: 2000 });
    } finally {
      await page.close();
    }
  });

  test("an app that asks to end is torn down like one the page ends", async () => {
    const page = await browser.newPage();
    try {
      await openApp(page, harness, "probe", { n: 1 });
      await waitForLog(page, "probe");
      await page.frameLocator(FRAME).locator("#close").click();
      assert.deepEqual(await waitForLog(page, "teardown"), { teardown: "the app asked to end" });
      assert.deepEqual(await waitForActivity(page, "closed"), {
        kind: "closed",
        why: "the app asked to end",
      });
      assert.equal(await page.locator(FRAME).count(), 0);
    } finally {
      await page.close();
    }
  });

  test("unmounting asks the app to tear down, then removes its frame", async () => {
    const page = await browser.newPage();
    try {
      await openApp(page, harness, "probe", { n: 1 });
      await waitForLog(page, "probe");
      await page.evaluate(() =>
        (globalThis as unknown as { mountedApp: { unmount(r: string): Promise<void> } }).mountedApp.unmount(
          "the user closed it",
        ),
      );
      assert.deepEqual(await waitForLog(page, "teardown"), { teardown: "the user closed it" });
      assert.equal(await page.locator(FRAME).count(), 0);
      const closed = (await activities(page)).filter((a) => a.kind === "closed");
      assert.deepEqual(closed, [{ kind: "closed", why: "the user closed it" }]);
    } finally {
      await page.close();
    }
  });
});
