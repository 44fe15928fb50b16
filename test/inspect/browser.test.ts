// The explorer's page in a real browser (Debian's Chromium, driven by playwright-core), against
// server-everything over stdio and the fleet's HTTP servers: the flows a developer goes through,
// found by the accessible names outside checks rely on. One browser for the file; each view is
// written as a screenshot to .test-artifacts/inspect/.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import type { Browser, Page } from "playwright-core";
import { serverPath, useFleet } from "../helpers/fleet.ts";
import { consoleErrors, type ExplorerRun, launchBrowser, shot, startExplorer } from "../helpers/inspect.ts";

const fleet = useFleet(["streamable-2025-11-25-sse", "modern-2026-07-28"]);
let browser: Browser;
let run: ExplorerRun;
let page: Page;
let errors: string[];

before(async () => {
  [browser, run] = await Promise.all([
    launchBrowser(),
    startExplorer(["--", process.execPath, serverPath("everything.mjs"), "stdio"]),
  ]);
  page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  page.setDefaultTimeout(15_000);
  errors = consoleErrors(page);
});
after(async () => {
  await browser?.close();
  await run?.stop();
});

/** The page's inputs, selects, textareas and buttons that have no accessible name. */
const unlabelled = (p: Page): Promise<string[]> =>
  p.evaluate(`[...document.querySelectorAll("input, select, textarea, button")]
    .filter((el) => !el.closest("[hidden]") && !(el.labels && el.labels.length) && !el.getAttribute("aria-label") && !(el.tagName === "BUTTON" && el.textContent.trim()))
    .map((el) => el.outerHTML.slice(0, 120))`);

const tool = (p: Page, name: string) => p.getByRole("button", { name: new RegExp(`^${name}\\b`) }).first();
const result = (p: Page) => p.getByRole("region", { name: "Result" });

async function runTool(p: Page, name: string): Promise<void> {
  await tool(p, name).click();
  await p
    .getByRole("heading", { level: 2 })
    .filter({ hasText: new RegExp(name.replace(/-/g, "."), "i") })
    .first()
    .waitFor();
}

test("S9: the printed URL opens the page, leaves the address bar without the token, and shows the first tool with no click", async () => {
  const started = performance.now();
  await page.goto(run.url);
  await tool(page, "echo").waitFor({ state: "visible" });
  const ms = performance.now() - started;
  assert.equal(new URL(page.url()).search, "", "the token is gone from the address bar");
  assert.ok(ms < 10_000, `first tool after ${ms} ms`);
  await shot(page, "tools");
});

test("a call is filled by its labelled argument and run; its outcome is in the Result region", async () => {
  await runTool(page, "echo");
  await page.getByLabel("message", { exact: true }).fill("hello from the page");
  await page.getByRole("button", { name: "Run", exact: true }).click();
  await result(page).getByText("Echo: hello from the page").waitFor();
  assert.match((await result(page).textContent()) ?? "", /ms/, "the call's time is shown");
  await shot(page, "result");
});

test("a schema form checks numbers before sending, then get-sum runs with them", async () => {
  await runTool(page, "get-sum");
  await page.getByLabel("a", { exact: true }).fill("2");
  await page.getByRole("button", { name: "Run", exact: true }).click();
  await page.getByRole("alert").filter({ hasText: "b is required" }).waitFor();
  await page.getByLabel("b", { exact: true }).fill("3.5");
  await page.getByRole("button", { name: "Run", exact: true }).click();
  await result(page).getByText(/5\.5/).waitFor();
});

test("an image result shows the decoded image", async () => {
  await runTool(page, "get-tiny-image");
  await page.getByRole("button", { name: "Run", exact: true }).click();
  const img = result(page).locator("img").first();
  await img.waitFor();
  await page.waitForFunction(
    (el) => (el as unknown as { complete: boolean; naturalWidth: number }).complete,
    await img.elementHandle(),
  );
  const width = await img.evaluate(
    (el) => (el as unknown as { complete: boolean; naturalWidth: number }).naturalWidth,
  );
  assert.ok(width > 0, "the image decoded");
  await shot(page, "image");
});

test("a slow call shows its progress, and Cancel ends it", async () => {
  await runTool(page, "trigger-long-running-operation");
  await page.getByLabel("duration", { exact: true }).fill("60");
  await page.getByLabel("steps", { exact: true }).fill("600");
  await page.getByRole("button", { name: "Run", exact: true }).click();
  const calls = page.getByRole("region", { name: "Calls in flight" });
  await calls.getByText(/\d+\/600/).waitFor();
  const value = await calls
    .locator("progress")
    .first()
    .evaluate((el) => (el as unknown as { value: number }).value);
  assert.ok(value > 0, "the bar moved");
  await shot(page, "progress");
  await calls.getByRole("button", { name: "Cancel" }).click();
  await result(page)
    .getByText(/cancelled/)
    .waitFor();
  assert.equal(await calls.getByRole("button", { name: "Cancel" }).count(), 0);
});

test("an elicitation dialog is answered from a form built from its schema", async () => {
  await runTool(page, "trigger-elicitation-request");
  await page.getByRole("button", { name: "Run", exact: true }).click();
  const dialog = page.getByRole("dialog");
  await dialog.getByLabel("name", { exact: true }).fill("Ada Lovelace");
  await shot(page, "elicitation");
  await dialog.getByRole("button", { name: "Accept" }).click();
  await result(page).getByText("Name: Ada Lovelace").waitFor();
});

test("a server log line appears in Notifications", async () => {
  await runTool(page, "toggle-simulated-logging");
  await page.getByRole("button", { name: "Run", exact: true }).click();
  await page
    .getByRole("region", { name: "Notifications" })
    .getByText(/-level message|level-message/i)
    .first()
    .waitFor();
});

test("search, a choice, structuredContent with its verdict, and the JSON editor", async () => {
  const search = page.getByLabel("Search tools");
  await search.fill("structured");
  await page.getByRole("button", { name: /^get-/ }).first().waitFor();
  assert.equal(await page.locator(".tools button").count(), 1, "the search leaves one tool");
  await runTool(page, "get-structured-content");
  await page.getByLabel("location", { exact: true }).selectOption({ label: "Chicago" });
  await page.getByRole("button", { name: "Run", exact: true }).click();
  const structured = result(page).getByRole("region", { name: "structuredContent" });
  await structured.getByText("structuredContent matches the output schema").waitFor();
  await structured.getByText(/^structuredContent \{\d+\}$/).waitFor();
  await shot(page, "structured");
  await search.fill("");
  await runTool(page, "get-sum");
  await page.getByLabel("a", { exact: true }).fill("1");
  await page.getByLabel("Edit as JSON").check();
  const json = page.getByLabel("Arguments as JSON");
  assert.match(await json.inputValue(), /"a": 1/, "the form's values carry over");
  await json.fill('{"a": 20, "b": 22}');
  await page.getByRole("button", { name: "Run", exact: true }).click();
  await result(page)
    .getByText(/\b42\b/)
    .waitFor();
});

test("a tool run as a task, by keyboard", async () => {
  await tool(page, "simulate-research-query").focus();
  await page.keyboard.press("Enter");
  await page
    .getByRole("heading", { level: 2 })
    .filter({ hasText: /research/i })
    .first()
    .waitFor();
  await page.getByLabel("topic", { exact: true }).fill("tether");
  await page.getByRole("button", { name: "Run as task", exact: true }).focus();
  await page.keyboard.press("Enter");
  await result(page)
    .getByText(/Research Report: tether/)
    .waitFor({ timeout: 60_000 });
  await result(page)
    .getByText(/as a task/)
    .waitFor();
});

test("roots edited on the page reach the server, and the server's log level is set", async () => {
  await page.getByRole("button", { name: "Overview", exact: true }).click();
  await page.getByLabel("Roots offered to the server, one URI a line").fill("file:///tmp/tether-project");
  await page.getByRole("button", { name: "Save roots" }).click();
  await page.getByRole("button", { name: "Tools", exact: true }).click();
  await runTool(page, "get-roots-list");
  await page.getByRole("button", { name: "Run", exact: true }).click();
  await result(page)
    .getByText(/file:\/\/\/tmp\/tether-project/)
    .first()
    .waitFor();
  const notifications = page.getByRole("region", { name: "Notifications" });
  await notifications.getByLabel("Server level").selectOption("error");
  await notifications.getByRole("button", { name: "Set level" }).click();
  await notifications.getByText("server level set to error").waitFor();
});

test("every view renders with no console error", async () => {
  for (const view of ["Overview", "Resources", "Prompts", "History", "Tools"]) {
    await page.getByRole("button", { name: view, exact: true }).click();
    await page.getByRole("button", { name: view, exact: true, pressed: true }).waitFor();
    if (view === "Overview")
      await page
        .getByRole("region", { name: "Establishment timeline" })
        .getByText("attempt 1 · initialize", { exact: true })
        .waitFor();
    if (view === "Resources") await page.getByRole("heading", { name: "Templates" }).waitFor();
    if (view === "Prompts") await page.getByRole("heading", { name: "Prompts" }).waitFor();
    if (view === "History") {
      // Read off the wire: the handshake, and the cancel the slow call's Cancel sent.
      await page.getByText(/^→ initialize ·/).waitFor();
      await page
        .getByText(/^→ notifications\/cancelled ·/)
        .first()
        .waitFor();
      await page
        .getByText(/^← tools\/call \(result\) ·/)
        .first()
        .waitFor();
    }
    await shot(page, view.toLowerCase());
    assert.deepEqual(await unlabelled(page), [], `every control of ${view} has a name`);
  }
  assert.deepEqual(errors, []);
});

test("over HTTP: both servers named on the command line are listed; each one's tools run", async () => {
  const [sse, modern] = [fleet().http("streamable-2025-11-25-sse"), fleet().http("modern-2026-07-28")];
  const http = await startExplorer([sse.url, modern.url]);
  const p = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  p.setDefaultTimeout(15_000);
  const httpErrors = consoleErrors(p);
  try {
    await p.goto(http.url);
    await tool(p, "add").waitFor();
    await runTool(p, "add");
    await p.getByLabel("a", { exact: true }).fill("2");
    await p.getByLabel("b", { exact: true }).fill("3");
    await p.getByRole("button", { name: "Run", exact: true }).click();
    await result(p).getByText("5", { exact: true }).waitFor();
    await p.getByRole("navigation", { name: "Servers" }).getByRole("button").nth(1).click();
    await p
      .getByRole("navigation", { name: "Servers" })
      .getByText(/2026-07-28/)
      .waitFor();
    await runTool(p, "echo");
    await p.getByLabel("message", { exact: true }).fill("over modern HTTP");
    await p.getByRole("button", { name: "Run", exact: true }).click();
    await result(p).getByText("over modern HTTP").waitFor();
    await shot(p, "http");
    assert.deepEqual(httpErrors, []);
  } finally {
    await p.close();
    await http.stop();
  }
});

test("a failed connect shows its error record (code, stage, phase, message, hint) and its timeline", async () => {
  const failed = await startExplorer(["--", "/nonexistent/tether-no-such-server"]);
  const p = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  p.setDefaultTimeout(15_000);
  const failedErrors = consoleErrors(p);
  try {
    await p.goto(failed.url);
    const record = p.getByRole("region", { name: "Connect error" });
    await record.getByText("spawn", { exact: true }).waitFor();
    const text = (await record.textContent()) ?? "";
    for (const word of ["connection", "discovery", "nonexistent/tether-no-such-server", "hint"])
      assert.ok(text.includes(word), `${word} in ${text}`);
    await p
      .getByRole("region", { name: "Establishment timeline" })
      .getByText(/failed: connection/)
      .waitFor();
    await shot(p, "failed");
    assert.deepEqual(failedErrors, []);
  } finally {
    await p.close();
    await failed.stop();
  }
});
