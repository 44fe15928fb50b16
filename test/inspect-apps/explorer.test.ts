// MCP Apps through `tether inspect` itself: the built CLI, the printed URL opened in Chromium, a
// tool with an app run from its form. Its result shows as usual in the Result region, and below
// it the app, in a sandboxed frame from the apps listener; the app's own button calls a tool
// through the explorer. Against @modelcontextprotocol/server-basic-vanillajs and the probing
// fixture (test/fixtures/apps/apps-server.mjs).

import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { Browser, Page } from "playwright-core";
import {
  api,
  consoleErrors,
  type ExplorerRun,
  launchBrowser,
  raw,
  startExplorer,
} from "../helpers/inspect.ts";
import { APPS_FIXTURE, ARTIFACTS, BASIC_VANILLAJS } from "./harness.ts";

let browser: Browser;
before(async () => {
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
});

const result = (p: Page) => p.getByRole("region", { name: "Result" });
/** The app shown below the Result region. */
const app = (p: Page) => p.getByRole("region", { name: /^App ui:\/\// });

/** Opens the explorer, picks `tool` and runs it with no arguments. */
async function runTool(page: Page, run: ExplorerRun, tool: string): Promise<void> {
  await page.goto(run.url);
  await page
    .getByRole("button", { name: new RegExp(`^${tool}\\b`) })
    .first()
    .click();
  await page.getByRole("button", { name: "Run", exact: true }).click();
}

describe("tether inspect with server-basic-vanillajs", () => {
  let run: ExplorerRun;
  before(async () => {
    run = await startExplorer(["--", process.execPath, BASIC_VANILLAJS, "--stdio"]);
  });
  after(async () => {
    if (run?.cli.child.exitCode === null) await run.stop();
  });

  test("S9: a tool with an app shows its result and its app, and the app's button calls a tool through the explorer", async () => {
    const page = await browser.newPage();
    const errors = consoleErrors(page);
    try {
      await runTool(page, run, "get-time");
      const region = result(page);
      // The result as usual (text), then the app in its frame.
      await region
        .locator("pre.text")
        .filter({ hasText: /^\d{4}-\d\d-\d\dT/ })
        .waitFor();
      const frameElement = app(page).locator("iframe.mcp-app-frame");
      assert.equal(await frameElement.getAttribute("sandbox"), "allow-scripts allow-forms");
      const frameUrl = new URL((await frameElement.getAttribute("src"))!);
      assert.equal(frameUrl.hostname, "127.0.0.1");
      assert.notEqual(frameUrl.port, new URL(run.base).port, "the app has an origin of its own");
      assert.ok(!frameUrl.href.includes(run.token), "the app's URL does not carry the token");
      const time = app(page).frameLocator("iframe.mcp-app-frame").locator("#server-time");
      await time.filter({ hasText: /^\d{4}-\d\d-\d\dT/ }).waitFor();
      const first = await time.textContent();
      await page.screenshot({ path: join(ARTIFACTS, "explorer-basic-vanillajs.png"), fullPage: true });
      await app(page).frameLocator("iframe.mcp-app-frame").locator("#get-time-btn").click();
      await time.filter({ hasNotText: first! }).waitFor();
      await app(page)
        .locator(".app-activity li")
        .filter({ hasText: /^tools\/call get-time: ok in \d+ ms$/ })
        .waitFor({ state: "attached" });
      assert.deepEqual(errors, []);
    } finally {
      await page.close();
    }
  });
});

describe("tether inspect with the probing app", () => {
  let run: ExplorerRun;
  before(async () => {
    run = await startExplorer(["--", process.execPath, APPS_FIXTURE]);
  });
  after(async () => {
    if (run?.cli.child.exitCode === null) await run.stop();
  });

  test("S9: the app reaches nothing of the explorer's, and the sources refused from its CSP are shown", async () => {
    const page = await browser.newPage();
    try {
      await runTool(page, run, "probe");
      await app(page)
        .locator(".warn")
        .filter({
          hasText:
            "Left out of the app's CSP (not plain origins): frameDomains: https://frames.example.com; script-src *",
        })
        .waitFor();
      const probe = app(page)
        .locator(".app-activity li")
        .filter({ hasText: /^log info: \{"probe":true/ });
      await probe.waitFor({ state: "attached" });
      const found = JSON.parse((await probe.textContent())!.slice("log info: ".length)) as Record<
        string,
        string
      >;
      assert.equal(found.origin, "null");
      assert.match(found.parentDom!, /^blocked SecurityError/);
      assert.match(found.cookie!, /^blocked SecurityError/);
      // The app reads a resource of its server through the explorer.
      const frame = app(page).frameLocator("iframe.mcp-app-frame");
      await frame.locator("#read").click();
      await frame.locator("#called").filter({ hasText: "read: not html" }).waitFor();
      await app(page).locator("details summary").click();
      await page.screenshot({ path: join(ARTIFACTS, "explorer-probe.png"), fullPage: true });
      // Another run replaces the app, once the new result is in: one app again, the new one's.
      const firstFrame = await app(page).locator("iframe.mcp-app-frame").getAttribute("src");
      await page.getByRole("button", { name: "Run", exact: true }).click();
      await page.locator(`iframe.mcp-app-frame:not([src="${firstFrame}"])`).waitFor();
      await page.locator(`iframe.mcp-app-frame[src="${firstFrame}"]`).waitFor({ state: "detached" });
      assert.equal(await app(page).count(), 1);
    } finally {
      await page.close();
    }
  });

  test("leaving a tool's view asks its app to tear down and waits for its answer before the frame goes", async () => {
    const page = await browser.newPage();
    try {
      await page.goto(run.url);
      // The explorer is the file's: what earlier tests called is in its history already.
      await page.getByRole("button", { name: "History", exact: true }).click();
      await page.getByText(/^→ initialize ·/).waitFor();
      const calls = page.getByText(/^→ tools\/call ·/);
      const earlier = await calls.count();
      await page.getByRole("button", { name: "Tools", exact: true }).click();
      await page
        .getByRole("button", { name: /^probe\b/ })
        .first()
        .click();
      // The app is asked (teardownCall) to call probe with n = 21 before it answers the teardown.
      await page.getByLabel("teardownCall", { exact: true }).fill("21");
      await page.getByRole("button", { name: "Run", exact: true }).click();
      await app(page)
        .locator(".app-activity li")
        .filter({ hasText: /^log info: \{"probe":true/ })
        .waitFor({ state: "attached" });
      await page.getByRole("button", { name: "Resources", exact: true }).click();
      await page.getByRole("heading", { name: "Templates" }).waitFor();
      assert.equal(await page.locator("iframe.mcp-app-frame").count(), 0, "the frame is gone");
      // The call the app made while tearing down reached the server: the frame stayed for its answer.
      await page.getByRole("button", { name: "History", exact: true }).click();
      await calls.nth(earlier + 1).waitFor();
      assert.equal(await calls.count(), earlier + 2, "the run's call and the app's");
    } finally {
      await page.close();
    }
  });

  test("S9: a link the app asks to open opens only once the user said yes", async () => {
    const page = await browser.newPage();
    try {
      const link = `${run.base}/landing-${Date.now()}`;
      await page.goto(run.url);
      await page
        .getByRole("button", { name: /^probe\b/ })
        .first()
        .click();
      await page.getByLabel("link", { exact: true }).fill(link);
      await page.getByRole("button", { name: "Run", exact: true }).click();
      const frame = app(page).frameLocator("iframe.mcp-app-frame");
      await frame.locator("#result").filter({ hasText: "probed 0" }).waitFor();
      const asked: string[] = [];
      page.once("dialog", (d) => {
        asked.push(d.message());
        void d.dismiss();
      });
      await frame.locator("#link").click();
      const declined = app(page)
        .locator(".app-activity li")
        .filter({ hasText: `link ${link}: declined` });
      await declined.waitFor({ state: "attached" });
      assert.ok(asked[0]?.includes(link), asked[0]);
      assert.equal(page.context().pages().length, 1);
      page.once("dialog", (d) => void d.accept());
      const popup = page.context().waitForEvent("page");
      await frame.locator("#link").click();
      const opened = await popup;
      await opened.waitForURL(link);
      await opened.close();
    } finally {
      await page.close();
    }
  });

  test("a tool whose ui:// resource is not an app shows its result, and says why there is no app", async () => {
    const page = await browser.newPage();
    try {
      await runTool(page, run, "not-an-app");
      await result(page).locator("pre.text").filter({ hasText: "no app after all" }).waitFor();
      await app(page)
        .getByRole("alert")
        .filter({
          hasText:
            "The app ui://fixture/plain.txt could not be shown: error: ui://fixture/plain.txt is not an MCP App: text/html;profile=mcp-app expected, the server sent text/plain [protocol/not_an_app at call, call]",
        })
        .waitFor();
      assert.equal(await page.locator("iframe").count(), 0);
    } finally {
      await page.close();
    }
  });

  test("M4: the explorer's connection declares the UI extension to the server", async () => {
    const listed = await raw(run.base, "/api/servers", { headers: { authorization: `Bearer ${run.token}` } });
    const server = (JSON.parse(listed.body) as { servers: { id: string }[] }).servers[0]!.id;
    const answer = await api(run, "call", { server, tool: "extensions", args: {}, callId: "x1" });
    const text = (answer.result as { content: { text: string }[] }).content[0]!.text;
    assert.deepEqual(JSON.parse(text), {
      "io.modelcontextprotocol/ui": { mimeTypes: ["text/html;profile=mcp-app"] },
    });
  });
});
