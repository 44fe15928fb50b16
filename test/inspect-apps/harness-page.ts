// The harness page (bundled for the browser by harness.ts): `window.openApp(tool, input)` asks the
// harness to read and publish the tool's app and call the tool, then mounts the app with the page
// half of the apps module; every activity lands in `window.appActivity`, the mounted app in
// `window.mountedApp`. The page's canary (`window.canary`) is what no app may read.

import {
  type AppActivity,
  type AppHandle,
  type AppTool,
  mountApp,
} from "../../src/inspect/page/apps/host.ts";

interface Opened {
  url: string;
  csp: string;
  refused: string[];
  approved: Record<string, string[]>;
  tool: AppTool;
  tools: AppTool[];
  input: Record<string, unknown>;
  result: unknown;
}

const w = window as unknown as {
  canary: string;
  appActivity: AppActivity[];
  mountedApp?: AppHandle;
  openApp(tool: string, input: Record<string, unknown>): Promise<Opened>;
};
w.canary = document.body.dataset.canary ?? "";
w.appActivity = [];

async function post(path: string, value: unknown, signal?: AbortSignal): Promise<unknown> {
  const res = await fetch(path, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(value),
    ...(signal ? { signal } : {}),
  });
  const answer = (await res.json()) as { error?: string };
  if (!res.ok) throw new Error(answer.error ?? `HTTP ${res.status}`);
  return answer;
}

w.openApp = async (tool, input) => {
  const opened = (await post("/open", { tool, input })) as Opened;
  const container = document.getElementById("app")!;
  w.mountedApp = mountApp(container, {
    url: opened.url,
    tool: opened.tool,
    tools: opened.tools,
    input: opened.input,
    result: opened.result,
    csp: opened.approved,
    callTool: (name, args, signal) => post("/call", { name, arguments: args }, signal),
    onActivity: (a) => w.appActivity.push(a),
  });
  return opened;
};
