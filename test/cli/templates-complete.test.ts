// `templates` and `complete` against server-everything through the built CLI.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { errorRecord, runCli } from "../helpers/cli.ts";
import { useFleet } from "../helpers/fleet.ts";

// Each test runs its own CLI processes, each with its own server process: side by side.
describe("templates and complete", { concurrency: true }, () => {
  const fleet = useFleet(["everything-stdio"]);
  const target = () => {
    const s = fleet().stdioServer("everything-stdio");
    return ["--", s.command, ...s.args];
  };

  test("M1: templates lists resource templates whole; --json is {resourceTemplates}", async () => {
    const table = await runCli(["templates", ...target()]);
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /^URI TEMPLATE\s+NAME/);
    assert.match(table.stdout, /\{resourceId\}/);
    const json = await runCli(["templates", "--json", ...target()]);
    assert.equal(json.code, 0, json.stderr);
    const doc = JSON.parse(json.stdout) as { resourceTemplates: { uriTemplate: string }[] };
    assert.ok(doc.resourceTemplates.some((t) => t.uriTemplate.endsWith("{resourceId}")));
  });

  test("M1: complete prints one value a line; context arguments narrow it; --json is the completion object", async () => {
    const dept = await runCli(["complete", "prompt:completable-prompt", "department=", ...target()]);
    assert.equal(dept.code, 0, dept.stderr);
    assert.equal(dept.stdout, "Engineering\nSales\nMarketing\nSupport\n");
    const names = await runCli([
      "complete",
      "prompt:completable-prompt",
      "name=",
      "department=Sales",
      "--json",
      ...target(),
    ]);
    assert.equal(names.code, 0, names.stderr);
    assert.deepEqual((JSON.parse(names.stdout) as { values: string[] }).values, ["David", "Eve", "Frank"]);
  });

  test("K1: a reference that is neither prompt: nor resource: is a config error", async () => {
    const run = await runCli(["complete", "completable-prompt", "department=E", ...target()]);
    assert.equal(run.code, 2);
    assert.equal(errorRecord(run).reason, "invalid_args");
  });
});
