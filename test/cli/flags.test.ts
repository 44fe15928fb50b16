// No silent no-ops: a flag that does not apply to the command is a config error; `call -o FILE`
// writes binary content decoded; `probe URL -- CMD` probes both targets.
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { errorRecord, runCli } from "../helpers/cli.ts";
import { useFleet } from "../helpers/fleet.ts";

const dir = mkdtempSync(join(tmpdir(), "tether-cli-flags-"));
after(() => rmSync(dir, { recursive: true, force: true }));

describe("flags that apply, and only those", () => {
  const fleet = useFleet(["everything-stdio", "modern-2026-07-28"]);

  test("K1: a flag the command does not use is a config error naming it and where it applies; nothing connects", async () => {
    const url = fleet().http("modern-2026-07-28").url;
    const cases: [string[], RegExp][] = [
      [
        ["resources", url, "--args-file", "x.json"],
        /--args-file does not apply to resources \(it applies to call, prompt\)/,
      ],
      [["tools", url, "-o", "out.bin"], /--output does not apply to tools/],
      [["servers", "--transport", "sse"], /--transport does not apply to servers/],
      [["completion", "bash", "--json"], /--json does not apply to completion/],
    ];
    for (const [args, message] of cases) {
      const run = await runCli(args);
      assert.equal(run.code, 2, run.stderr);
      assert.equal(run.stdout, "");
      const record = errorRecord(run);
      assert.equal(record.reason, "inapplicable_flag");
      assert.match(String(record.message), message);
    }
  });

  test("K1: call -o FILE writes the tool's image decoded (server-everything get-tiny-image)", async () => {
    const s = fleet().stdioServer("everything-stdio");
    const file = join(dir, "tiny.png");
    const run = await runCli(["call", "get-tiny-image", "-o", file, "--", s.command, ...s.args]);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, "");
    const bytes = readFileSync(file);
    assert.deepEqual([...bytes.subarray(0, 4)], [0x89, 0x50, 0x4e, 0x47], "a PNG signature");
  });

  test("K1: probe URL -- CMD probes both targets", async () => {
    const url = fleet().http("modern-2026-07-28").url;
    const s = fleet().stdioServer("everything-stdio");
    const run = await runCli(["probe", url, "--json", "--", s.command, ...s.args]);
    assert.equal(run.code, 0, run.stderr);
    const { results } = JSON.parse(run.stdout) as { results: unknown[] };
    assert.equal(results.length, 2);
  });

  test("K1: an unknown option is named with the closest one; an unknown command suggests the right one", async () => {
    const url = fleet().http("modern-2026-07-28").url;
    const option = await runCli(["tools", url, "--jsno"]);
    assert.equal(option.code, 2);
    assert.match(String(errorRecord(option).message), /unknown option --jsno \(did you mean --json\?\)/);
    const command = await runCli(["tosls", url]);
    assert.equal(command.code, 2);
    assert.equal(errorRecord(command).reason, "unknown_command");
    assert.match(String(errorRecord(command).message), /did you mean tools\?/);
  });
});
