// The explorer's page in a real browser (Debian's Chromium, driven by playwright-core), against
// server-everything over stdio and the fleet's HTTP servers: the flows a developer goes through,
// found by the accessible names outside checks rely on. One browser for the file; each view is
// written as a screenshot to .test-artifacts/inspect/.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, test } from "node:test";
import type { Browser, Page } from "playwright-core";
import { serverPath, useFleet } from "../helpers/fleet.ts";
import { destroy, type Handler, hostileSet, legacyStreamableHandler } from "../helpers/hostile.ts";
import { type ExplorerRun, launchBrowser, openPage, shot, startExplorer } from "../helpers/inspect.ts";

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
  ({ page, errors } = await openPage(browser));
});
const servers = hostileSet();
after(async () => {
  await browser?.close();
  await run?.stop();
  await servers.closeAll();
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
    .getByRole("alert")
    .filter({ hasText: /cancelled/ })
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

/** The values an input's suggestion list (its datalist) offers, once it offers `expected`. */
async function suggestions(
  p: Page,
  input: ReturnType<Page["getByLabel"]>,
  expected: string,
): Promise<string[]> {
  const handle = await input.elementHandle();
  await p.waitForFunction(
    ([el, want]) =>
      [...((el as unknown as { list: { options: { value: string }[] } | null }).list?.options ?? [])].some(
        (o) => o.value === want,
      ),
    [handle, expected] as const,
  );
  return input.evaluate((el) =>
    [...((el as unknown as { list: { options: { value: string }[] } }).list.options ?? [])].map(
      (o) => o.value,
    ),
  );
}

test("a prompt's arguments offer the server's completions as they are typed; the picked ones fetch the prompt", async () => {
  await page.getByRole("button", { name: "Prompts", exact: true }).click();
  await page.getByRole("button", { name: "completable-prompt", exact: true }).click();
  const department = page.getByLabel("department", { exact: true });
  await department.pressSequentially("Eng");
  assert.deepEqual(await suggestions(page, department, "Engineering"), ["Engineering"]);
  await department.fill("Engineering");
  // The second argument's completions depend on the first: the page sends it as context.
  const name = page.getByLabel("name", { exact: true });
  await name.pressSequentially("A");
  assert.deepEqual(await suggestions(page, name, "Alice"), ["Alice"]);
  await shot(page, "prompt-completion");
  await name.fill("Alice");
  await page.getByRole("button", { name: "Get prompt", exact: true }).click();
  await page
    .getByRole("region", { name: "Prompt" })
    .getByText("Please promote Alice to the head of the Engineering team.")
    .waitFor();
});

test("a resource template's variable offers the server's completions; the picked one reads the resource", async () => {
  await page.getByRole("button", { name: "Resources", exact: true }).click();
  const template = page.getByRole("group", { name: "Dynamic Text Resource" });
  const id = template.getByLabel("resourceId", { exact: true });
  await id.pressSequentially("7");
  assert.deepEqual(await suggestions(page, id, "7"), ["7"]);
  await shot(page, "template-completion");
  await id.fill("7");
  await template.getByRole("button", { name: "Read", exact: true }).click();
  const resource = page.getByRole("region", { name: "Resource" });
  await resource.getByText("demo://resource/dynamic/text/7", { exact: true }).waitFor();
  await resource
    .getByText(/Resource 7/)
    .first()
    .waitFor();
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

test("the history exports as a file, and a request in it is sent again", async () => {
  await page.getByRole("button", { name: "History", exact: true }).click();
  const [download] = await Promise.all([
    page.waitForEvent("download"),
    page.getByRole("button", { name: "Export", exact: true }).click(),
  ]);
  const entries = JSON.parse(readFileSync(await download.path(), "utf8")) as {
    method: string;
    dir: string;
  }[];
  assert.ok(
    entries.some((e) => e.method === "initialize" && e.dir === "out"),
    "the handshake is in the file",
  );
  const entry = page
    .locator("details")
    .filter({ has: page.getByText(/^→ tools\/call ·/) })
    .first();
  await entry.locator("summary").click();
  await entry.getByRole("button", { name: "Replay tools/call" }).click();
  await entry
    .locator(".replayed")
    .getByText(/^result \{/)
    .waitFor();
  assert.match((await entry.locator(".replayed").textContent()) ?? "", /Echo: hello from the page/);
  await shot(page, "replay");
});

test("Disconnect closes the connection and Connect makes a new one, with its own timeline", async () => {
  await page.getByRole("button", { name: "Overview", exact: true }).click();
  const sidebar = page.getByRole("navigation", { name: "Servers" });
  await page.getByRole("button", { name: "Disconnect", exact: true }).click();
  await sidebar.getByText(/^closed/).waitFor();
  await page.getByRole("button", { name: "Connect", exact: true }).click();
  await sidebar.getByText(/^open/).waitFor();
  await page
    .getByRole("region", { name: "Establishment timeline" })
    .getByText("attempt 1 · initialize", { exact: true })
    .waitFor();
  await page.getByRole("button", { name: "Tools", exact: true }).click();
  await tool(page, "echo").waitFor();
});

test("over HTTP: both servers named on the command line are listed; each one's tools run", async () => {
  const [sse, modern] = [fleet().http("streamable-2025-11-25-sse"), fleet().http("modern-2026-07-28")];
  const http = await startExplorer([sse.url, modern.url]);
  const { page: p, errors: httpErrors } = await openPage(browser);
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
  const { page: p, errors: failedErrors } = await openPage(browser);
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

test("R2: a recovery's attempts are both in the timeline: the first's failed stage, the retry, the second's handshake ok", async () => {
  // The first request of all is cut off (a reset: eligible); every later one is answered correctly.
  const correct = legacyStreamableHandler();
  let requests = 0;
  const handler: Handler = (res, rec, req) => (requests++ === 0 ? destroy() : correct)(res, rec, req);
  const server = await servers.http(handler);
  const retried = await startExplorer([server.url, "--retry", "2"]);
  const { page: p, errors: retriedErrors } = await openPage(browser);
  try {
    await p.goto(retried.url);
    await tool(p, "echo").waitFor();
    await p.getByRole("button", { name: "Overview", exact: true }).click();
    const timeline = p.getByRole("region", { name: "Establishment timeline" });
    await timeline
      .getByText(/^attempt 2 · /)
      .first()
      .waitFor();
    const rows = (await timeline.locator("li").allTextContents()).map((t) => t.replace(/\s+/g, " "));
    const first = rows.filter((r) => r.startsWith("attempt 1 · "));
    const second = rows.filter((r) => r.startsWith("attempt 2 · "));
    assert.ok(first.length > 0 && second.length > 0, `both attempts' stages in ${rows.join(" | ")}`);
    assert.match(first.at(-1)!, /failed: connection\//, "the first attempt's last stage failed");
    // The second attempt's modern probe is refused (a legacy server), then its handshake succeeds.
    assert.ok(
      second.some((r) => /^attempt 2 · initialize[\d.]+ \+ .* ok$/.test(r)) && / ok$/.test(second.at(-1)!),
      `the second attempt's handshake ok: ${second.join(" | ")}`,
    );
    const retry = rows.findIndex((r) => /recovery retry/.test(r));
    assert.ok(
      retry > rows.indexOf(first.at(-1)!),
      `the retry decision after the failed stage: ${rows.join(" | ")}`,
    );
    assert.ok(retry < rows.indexOf(second[0]!), "and before the second attempt");
    assert.equal(await p.getByRole("definition").filter({ hasText: /^2$/ }).count(), 1, "Attempts: 2");
    await shot(p, "recovery-timeline");
    assert.deepEqual(retriedErrors, []);
  } finally {
    await p.close();
    await retried.stop();
  }
});
