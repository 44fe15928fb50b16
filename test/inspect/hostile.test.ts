// A hostile server's words on the explorer's page (CONTRACT S9, S4): markup in every string it
// controls stays text (a canary global is never set), a cancel reaches the server, and a careless
// server that echoes its credentials back in every form gets none of them onto the page (nor into
// anything the explorer's API or event stream sends it).

import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";
import type { Browser, Page } from "playwright-core";
import { assertNoLeak, CANARIES, ECHO_SERVER, echoUpstreams, useEchoServer } from "../helpers/canaries.ts";
import { consoleErrors, type ExplorerRun, launchBrowser, shot, startExplorer } from "../helpers/inspect.ts";

const HOSTILE = fileURLToPath(new URL("../fixtures/inspect/hostile-server.mjs", import.meta.url));
const echo = useEchoServer();
const dir = mkdtempSync(join(tmpdir(), "tether-inspect-"));
const config = join(dir, "mcp.json");
writeFileSync(
  config,
  JSON.stringify({
    mcpServers: {
      hostile: { command: process.execPath, args: [HOSTILE] },
      careless: {
        command: process.execPath,
        args: [ECHO_SERVER, "stdio"],
        env: { TETHER_ECHO_KEY: CANARIES.env, TETHER_ECHO_TOKEN: CANARIES.bearer },
      },
    },
  }),
);

let browser: Browser;
let run: ExplorerRun;
let page: Page;
let errors: string[];

before(async () => {
  [browser, run] = await Promise.all([
    launchBrowser(),
    startExplorer(["hostile", "careless", "--config", config]),
  ]);
  page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  page.setDefaultTimeout(15_000);
  errors = consoleErrors(page);
  await page.goto(run.url);
});
after(async () => {
  await browser?.close();
  await run?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const pwned = (p: Page) => p.evaluate("window.__pwned");
const runButton = (p: Page) => p.getByRole("button", { name: "Run", exact: true });
const result = (p: Page) => p.getByRole("region", { name: "Result" });
const server = (p: Page, name: RegExp) =>
  p.getByRole("navigation", { name: "Servers" }).getByRole("button", { name });

test("S9: a server's markup is shown as text on every view and never runs", async () => {
  await page.getByRole("button", { name: /^markup\b/ }).click();
  await page.getByText('A description <img src=x onerror="window.__pwned=1">', { exact: false }).waitFor();
  await runButton(page).click();
  await result(page).getByText("result <img src=x", { exact: false }).waitFor();
  await result(page)
    .getByRole("button", { name: /^Open demo:\/\/markup/ })
    .click();
  await page
    .getByRole("region", { name: "Resource" })
    .getByText("<script>window.__pwned=1</script>", { exact: false })
    .waitFor();
  // Subscribed, the update is told and the resource read again.
  const resource = page.getByRole("region", { name: "Resource" });
  await resource.getByRole("button", { name: "Subscribe" }).click();
  await page
    .getByRole("region", { name: "Notifications" })
    .getByText("resource updated: demo://markup")
    .waitFor();
  await resource.getByRole("button", { name: "Unsubscribe" }).waitFor();
  await page.getByRole("button", { name: "Tools", exact: true }).click();
  await page.getByRole("button", { name: /^log\b/ }).click();
  await runButton(page).click();
  await page
    .getByRole("region", { name: "Notifications" })
    .getByText("a log line <img", { exact: false })
    .waitFor();
  for (const view of ["Overview", "Resources", "Prompts", "History"]) {
    await page.getByRole("button", { name: view, exact: true }).click();
    await page.getByRole("button", { name: view, exact: true, pressed: true }).waitFor();
  }
  await page.getByRole("button", { name: "Overview", exact: true }).click();
  await page.getByText("Instructions <img", { exact: false }).waitFor();
  await shot(page, "hostile");
  assert.equal(await pwned(page), undefined, "no markup ran");
  assert.equal(
    await page.locator("main img[src='x'], main script:not([src])").count(),
    0,
    "no element made from a server's markup",
  );
  assert.deepEqual(errors, []);
});

test("S7: Cancel on a call in flight reaches the server (it says so in a log line)", async () => {
  await page.getByRole("button", { name: "Tools", exact: true }).click();
  await page.getByRole("button", { name: /^slow\b/ }).click();
  await runButton(page).click();
  const calls = page.getByRole("region", { name: "Calls in flight" });
  await calls.getByText(/\d+\/1000 step/).waitFor();
  await calls.getByRole("button", { name: "Cancel" }).click();
  await page.getByRole("region", { name: "Notifications" }).getByText("slow was cancelled").waitFor();
  await result(page)
    .getByText(/cancelled/)
    .waitFor();
});

/** Everything the explorer's event stream sends while `fn` runs. */
async function streamDuring(r: ExplorerRun, fn: () => Promise<void>): Promise<string> {
  const stop = new AbortController();
  const res = await fetch(`${r.base}/api/events`, {
    headers: { authorization: `Bearer ${r.token}` },
    signal: stop.signal,
  });
  let text = "";
  const reading = (async () => {
    const decoder = new TextDecoder();
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>)
        text += decoder.decode(chunk);
    } catch {}
  })();
  try {
    await fn();
  } finally {
    stop.abort();
    await reading;
  }
  return text;
}

/** Every view of the careless server's connection, its tools run and its questions answered. */
async function visitEverything(p: Page): Promise<string> {
  const bodies: string[] = [];
  p.on("response", (res) => {
    if (res.url().includes("/api/") && !res.url().endsWith("/api/events"))
      void res.text().then(
        (t) => bodies.push(t),
        () => {},
      );
  });
  await p.getByRole("button", { name: "Tools", exact: true }).click();
  await p.getByRole("button", { name: /^echo\b/ }).click();
  await runButton(p).click();
  await result(p).getByText("you sent", { exact: false }).waitFor();
  await p.getByRole("button", { name: /^chatty\b/ }).click();
  await runButton(p).click();
  await result(p).getByText("chatted").waitFor();
  await p.getByRole("button", { name: /^ask\b/ }).click();
  await runButton(p).click();
  const dialog = p.getByRole("dialog");
  await dialog.getByRole("button", { name: "Accept" }).click();
  await dialog.getByLabel("Reply").fill("a reply");
  await dialog.getByRole("button", { name: "Send reply" }).click();
  await result(p).getByText("asked: elicitation accept, sampling assistant").waitFor();
  await p.getByRole("button", { name: /^fail\b/ }).click();
  await runButton(p).click();
  await result(p).getByRole("alert").waitFor();
  await p.getByRole("button", { name: "Resources", exact: true }).click();
  await p.getByRole("button", { name: /^one\b/ }).click();
  await p.getByRole("region", { name: "Resource" }).getByText("resource text", { exact: false }).waitFor();
  await p.getByLabel("id", { exact: true }).pressSequentially("1");
  await p.getByRole("button", { name: "Prompts", exact: true }).click();
  await p.getByRole("button", { name: "greet", exact: true }).click();
  await p.getByRole("button", { name: "Get prompt" }).click();
  await p.getByRole("region", { name: "Prompt" }).getByText("prompt", { exact: false }).first().waitFor();
  await p.getByLabel("name", { exact: true }).pressSequentially("a");
  await p.getByRole("button", { name: "History", exact: true }).click();
  await p.getByText("completion/complete").first().waitFor();
  for (const d of await p.locator("details").all())
    await d.evaluate((el) => ((el as unknown as { open: boolean }).open = true));
  await p.getByRole("button", { name: "Overview", exact: true }).click();
  await p.getByRole("heading", { name: "Instructions" }).waitFor();
  return `${await p.content()}\n${await p.evaluate("document.body.textContent")}\n${bodies.join("\n")}`;
}

test("S4: a careless stdio server's echoed secrets never reach the page, the API or the event stream", async () => {
  await server(page, /careless/).click();
  await page.getByRole("button", { name: /^echo\b/ }).waitFor();
  let seen = "";
  const stream = await streamDuring(run, async () => {
    seen = await visitEverything(page);
  });
  assert.ok(stream.includes("completion/complete"), "the stream was read");
  assertNoLeak(seen, "the page");
  assertNoLeak(stream, "the event stream");
  assert.deepEqual(errors, []);
});

test("S4: over HTTP, the bearer token, a header and a query value echoed back never reach the page", async () => {
  const http = await startExplorer(echoUpstreams(echo.http)["streamable-http"]!(), echo.env);
  const p = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  p.setDefaultTimeout(15_000);
  const httpErrors = consoleErrors(p);
  try {
    await p.goto(http.url);
    await p.getByRole("button", { name: /^echo\b/ }).waitFor();
    let seen = "";
    const stream = await streamDuring(http, async () => {
      seen = await visitEverything(p);
    });
    assertNoLeak(seen, "the page");
    assertNoLeak(stream, "the event stream");
    assert.deepEqual(httpErrors, []);
  } finally {
    await p.close();
    await http.stop();
  }
});
