// Output-schema checking: what validating a result against a 20-property outputSchema costs per
// call, as a share of the whole call's CPU. One stdio connection to a bare server
// (bench/scripts/structured-server.mjs) per round: CPU per checked call, then the library's own
// validator run on that tool's schema and a result of it, alone, many times (the cost inside each
// call, without the noise of two connections). Calls with checking off are shown beside.

import { fileURLToPath } from "node:url";
import { defaultValidator } from "../../src/client/output-schema.ts";
import type { JsonObject } from "../../src/jsonrpc/messages.ts";
import { lib } from "../lib/library.ts";
import type { Row } from "../lib/report.ts";
import { summarize } from "../lib/stats.ts";

const SERVER = fileURLToPath(new URL("../scripts/structured-server.mjs", import.meta.url));

export interface ValidationConfig {
  repeats: number;
  calls: number;
}

interface Round {
  callUs: number;
  validateUs: number;
}

const cpuUs = (since: NodeJS.CpuUsage) => {
  const u = process.cpuUsage(since);
  return u.user + u.system;
};

async function round(validate: boolean, calls: number): Promise<Round> {
  const client = await lib.connect({
    command: process.execPath,
    args: [SERVER],
    eraHints: false,
    prefetchTools: true,
    ...(validate ? {} : { validateOutput: false }),
  });
  try {
    let last: { structuredContent?: unknown } = {};
    for (let i = 0; i < 50; i++) last = await client.callTool("record", { id: i });
    const started = process.cpuUsage();
    for (let i = 0; i < calls; i++) await client.callTool("record", { id: i });
    const callUs = cpuUs(started) / calls;
    // The same check a call makes: the listed schema object (its compiled form cached) and a result.
    const schema = client.cachedTools?.find((t) => t.name === "record")?.outputSchema as JsonObject;
    const check = await defaultValidator();
    const n = calls * 10;
    for (let i = 0; i < 1000; i++) check(schema, last.structuredContent as JsonObject);
    const v = process.cpuUsage();
    for (let i = 0; i < n; i++) check(schema, last.structuredContent as JsonObject);
    return { callUs, validateUs: cpuUs(v) / n };
  } finally {
    await client.close();
  }
}

export async function validationSection(cfg: ValidationConfig): Promise<Row[]> {
  const on: Round[] = [];
  const off: Round[] = [];
  for (let r = 0; r < cfg.repeats; r++) {
    const order = r % 2 === 0 ? [true, false] : [false, true];
    for (const validate of order) (validate ? on : off).push(await round(validate, cfg.calls));
  }
  const shares = summarize(on.map((x) => (100 * x.validateUs) / x.callUs));
  const checked = summarize(on.map((x) => x.callUs));
  const unchecked = summarize(off.map((x) => x.callUs));
  const validate = summarize(on.map((x) => x.validateUs));
  return [
    {
      section: "3",
      case: "output-schema check, 20-property schema (stdio): share of a call's CPU",
      unit: "%",
      ours: shares,
      oursWire: `check ${validate.median.toFixed(1)} µs of ${checked.median.toFixed(0)} µs CPU/call`,
      official: { label: "validateOutput: false, µs CPU/call", summary: unchecked },
      ratio: checked.median / unchecked.median,
      target: { text: "≤ 5 % of the call", met: shares.median <= 5 },
      note: "share = the validator's own CPU per check ÷ CPU per checked call; ratio = checked ÷ unchecked calls, each on its own connection",
    },
  ];
}
