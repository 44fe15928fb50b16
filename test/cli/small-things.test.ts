// Small things a person notices on a terminal: a blob read is named with its MIME type and decoded
// size; probe's marks are explained in a legend; a URL-mode elicitation (SEP-1036) shows the URL,
// opens it only when the person agrees, and waits for the server's completion notification within
// the call budget; off a terminal it is declined. A call the server refuses until a URL is opened
// (-32042) is sent again once, at a terminal, after the person agreed and the step completed.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { fileURLToPath } from "node:url";
import { CLI_BIN, errorRecord, hasScript, inTerminal, runCli } from "../helpers/cli.ts";

const fixture = (path: string) => fileURLToPath(new URL(`../fixtures/${path}`, import.meta.url));
const EVERYTHING = fileURLToPath(new URL("../../node_modules/.bin/mcp-server-everything", import.meta.url));
const URL_SERVER = ["--", process.execPath, fixture("url-elicitation/server.mjs")];
const BROWSER = fixture("url-elicitation/browser.sh");
const REQUIRED_SERVER = ["--", process.execPath, fixture("url-elicitation/required-server.mjs")];
const dir = mkdtempSync(join(tmpdir(), "tether-small-"));
after(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const freshFile = () => join(dir, `opened-${++files}`);

test("K1: on a terminal a blob read is named with its MIME type and decoded size, never its base64", {
  skip: (!hasScript && "no script(1)") || (!existsSync(EVERYTHING) && "no server-everything"),
}, async () => {
  const uri = "demo://resource/dynamic/blob/1";
  const json = await runCli(["read", uri, "--json", "--", EVERYTHING]);
  assert.equal(json.code, 0, json.stderr);
  const blob = (JSON.parse(json.stdout) as { contents: { blob: string; mimeType: string }[] }).contents[0]!;
  const size = Buffer.from(blob.blob, "base64").length;
  const out = inTerminal(["read", uri, "--", EVERYTHING]);
  assert.ok(out.includes(`[binary ${blob.mimeType} ${size} bytes ${uri}]\nexit=0\n`), out);
  assert.ok(!out.includes(blob.blob), "no base64 on the terminal");
});

test("K1: on a terminal probe's table is followed by a legend of its marks; piped, the table alone", {
  skip: !hasScript && "no script(1)",
}, async () => {
  const target = ["--", process.execPath, fixture("dies-at-start/server.mjs"), join(dir, "probe-starts")];
  const out = inTerminal(["probe", ...target]);
  assert.match(out, /probe \d+!\n/, "the failed stage carries its mark");
  assert.match(out, /\nlegend: STAGES: each stage and its time in ms; ! marks the stage that failed\n/);
  assert.match(out, /\n {8}HINT: used \(a remembered era shortened detection\), dropped/);
  const piped = await runCli(["probe", ...target]);
  assert.equal(piped.code, 3);
  assert.doesNotMatch(piped.stdout, /legend/);
});

test("K1: URL elicitation on a terminal: the URL and its host are shown, opened on yes, and its completion is awaited", {
  skip: !hasScript && "no script(1)",
}, () => {
  const opened = freshFile();
  const out = inTerminal(
    ["call", "connect", "--call-timeout", "10000", "-e", `TETHER_OPENED_FILE=${opened}`, ...URL_SERVER],
    { env: { TETHER_BROWSER: BROWSER, TETHER_OPENED_FILE: opened }, input: "y\n" },
  );
  assert.match(
    out,
    /\nSign in to the example service\.\nURL: {2}https:\/\/auth\.example\.com\/connect\?step=1\nhost: auth\.example\.com\n/,
  );
  assert.match(out, /Open it in your browser\? \[y\/N\] /);
  assert.equal(
    readFileSync(opened, "utf8"),
    "https://auth.example.com/connect?step=1\n",
    "opened, the URL as one argument",
  );
  assert.match(out, /The server reports the step in the browser complete\.\n/);
  assert.doesNotMatch(out, /did not report it complete/);
  assert.match(out, /action accept\n/);
  assert.match(out, /exit=0\n$/);
});

test("K1: URL elicitation on a terminal: anything but yes declines, and nothing is opened", {
  skip: !hasScript && "no script(1)",
}, () => {
  const opened = freshFile();
  const out = inTerminal(["call", "connect", ...URL_SERVER], {
    env: { TETHER_BROWSER: BROWSER, TETHER_OPENED_FILE: opened },
    input: "n\n",
  });
  assert.match(out, /action decline\n/);
  assert.equal(existsSync(opened), false);
});

test("K1: a URL elicitation the server never reports complete is waited for within the call budget only", {
  skip: !hasScript && "no script(1)",
}, () => {
  const opened = freshFile();
  const started = performance.now();
  const run = inTerminal(["call", "connect-never", "--call-timeout", "1500", ...URL_SERVER], {
    env: { TETHER_BROWSER: BROWSER, TETHER_OPENED_FILE: opened },
    input: "y\n",
  });
  assert.match(run, /action accept\nWaiting for the server to report the step in the browser complete…\n/);
  assert.match(run, /The server did not report it complete within the 1500 ms call budget\.\nexit=0\n$/);
  assert.ok(performance.now() - started < 25_000);
});

test("M4: off a terminal a URL elicitation is declined at once (the capability is declared) and nothing is opened", async () => {
  const opened = freshFile();
  const run = await runCli(["call", "connect", ...URL_SERVER], {
    env: { TETHER_BROWSER: BROWSER, TETHER_OPENED_FILE: opened },
  });
  assert.equal(run.code, 0, run.stderr);
  assert.equal(run.stdout, "action decline\n");
  assert.equal(run.stderr, "");
  assert.equal(existsSync(opened), false);
});

test("R8, K1: a call refused with -32042 shows the URL at a terminal, opens it on yes, and is sent again once after the completion", {
  skip: !hasScript && "no script(1)",
}, () => {
  const opened = freshFile();
  const args = ["call", "sign-in-first", "--call-timeout", "10000", "-e", `TETHER_OPENED_FILE=${opened}`];
  const out = inTerminal([...args, ...REQUIRED_SERVER], {
    env: { TETHER_BROWSER: BROWSER, TETHER_OPENED_FILE: opened },
    input: "y\n",
  });
  assert.match(
    out,
    /\nSign in to the example service first\.\nURL: {2}https:\/\/auth\.example\.com\/connect\?step=2\nhost: auth\.example\.com\n/,
  );
  assert.doesNotMatch(out, /javascript|Never shown/, "an elicitation without an http(s) URL is dropped");
  assert.equal(readFileSync(opened, "utf8"), "https://auth.example.com/connect?step=2\n");
  assert.match(
    out,
    /The server reports the step in the browser complete\.\nCalling the tool again, once, now that the server reports the step complete\.\n/,
  );
  assert.match(out, /signed in; call 2\nexit=0\n$/, "sent twice in all: the refused call and one more");
  // Declined: nothing opened, nothing sent again; the error and a hint that names no URL.
  const declined = freshFile();
  const no = inTerminal(
    ["call", "sign-in-first", "-e", `TETHER_OPENED_FILE=${declined}`, ...REQUIRED_SERVER],
    {
      env: { TETHER_BROWSER: BROWSER, TETHER_OPENED_FILE: declined },
      input: "n\n",
    },
  );
  assert.equal(existsSync(declined), false);
  assert.doesNotMatch(no, /Calling the tool again/);
  assert.match(
    no,
    /error: the server answered with JSON-RPC error -32042 \[remote_error\/rpc_error at call, call\]\n/,
  );
  assert.match(
    no,
    /\nhint: the server requires a URL opened in a browser before this can succeed; .*\nexit=7\n$/,
  );
  // Opened, but the server never reports it complete: waited for within the call budget, then
  // the error as it is, and nothing sent again.
  const never = freshFile();
  const late = inTerminal(
    [
      "call",
      "sign-in-first",
      "--call-timeout",
      "1500",
      "-e",
      `TETHER_OPENED_FILE=${never}`,
      ...REQUIRED_SERVER,
    ],
    { env: { TETHER_BROWSER: "true" }, input: "y\n" },
  );
  assert.match(late, /The server did not report it complete within the 1500 ms call budget\.\n/);
  assert.doesNotMatch(late, /Calling the tool again/);
  assert.match(late, /error: the server answered with JSON-RPC error -32042 .*\nhint: .*\nexit=7\n$/);
});

test("R8: off a terminal or with --json a -32042 is the error record with the count of URLs; nothing is opened or sent again", async () => {
  const opened = freshFile();
  const env = { TETHER_BROWSER: BROWSER, TETHER_OPENED_FILE: opened };
  for (const extra of [[], ["--json"]]) {
    const run = await runCli(
      ["call", "sign-in-first", ...extra, "-e", `TETHER_OPENED_FILE=${opened}`, ...REQUIRED_SERVER],
      {
        env,
      },
    );
    assert.equal(run.code, 7, run.stderr);
    assert.equal(run.stdout, "");
    const record = errorRecord(run);
    assert.equal(record.rpcCode, -32042);
    assert.equal(record.urlsRequired, 1);
    assert.doesNotMatch(run.stderr, /auth\.example\.com/, "the URL is not in the record");
  }
  assert.equal(existsSync(opened), false);
  if (!hasScript) return;
  // stderr a terminal but no one to answer (stdin is not one): the hint, and no question.
  const command = `env NO_COLOR=1 ${[process.execPath, CLI_BIN, "call", "sign-in-first", ...REQUIRED_SERVER].map((a) => JSON.stringify(a)).join(" ")} </dev/null; echo "exit=$?"`;
  const out = execFileSync("script", ["-qfc", command, "/dev/null"], {
    encoding: "utf8",
    timeout: 30_000,
  }).replace(/\r/g, "");
  assert.doesNotMatch(out, /Open it in your browser/);
  assert.match(
    out,
    /\nhint: the server requires a URL opened in a browser before this can succeed; tether shows it and asks to open it only on a terminal, without --json\nexit=7\n$/,
  );
});
