// Resources and prompts from the CLI: listing, reading text, and binary contents written only
// when asked (-o FILE, or - for stdout), decoded from base64 byte for byte.
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { runCli } from "../helpers/cli.ts";
import { useFleet } from "../helpers/fleet.ts";
import { startStdioScript } from "../helpers/hostile.ts";

const BLOB = Buffer.from([0, 1, 2, 253, 254, 255, 0x89, 0x50, 0x4e, 0x47]);

const server = startStdioScript(`
onMessage((m) => {
  if (m.method === "initialize") return send({ jsonrpc: "2.0", id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { resources: {} }, serverInfo: { name: "r", version: "1" } } });
  if (m.method === "resources/read") return send({ jsonrpc: "2.0", id: m.id, result: { contents: [{ uri: m.params.uri, mimeType: "image/png", blob: "${BLOB.toString("base64")}" }] } });
  if (m.id !== undefined) send({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "no" } });
});`);
after(() => server.dispose());

describe("resources and prompts", () => {
  const fleet = useFleet(["modern-2026-07-28", "streamable-2025-06-18", "legacy-stdio"]);

  test("lists resources and reads text, on a modern and a legacy server", async () => {
    for (const name of ["modern-2026-07-28", "streamable-2025-06-18"] as const) {
      const url = fleet().http(name).url;
      const list = await runCli(["resources", url, "--json"]);
      assert.equal(list.code, 0, list.stderr);
      const { resources } = JSON.parse(list.stdout) as { resources: { uri: string }[] };
      assert.ok(
        resources.some((r) => r.uri === "demo://greeting"),
        name,
      );
      const read = await runCli(["read", url, "demo://greeting"]);
      assert.equal(read.code, 0, read.stderr);
      assert.equal(read.stdout, "hello\n");
    }
  });

  test("lists prompts and gets one with arguments", async () => {
    const s = fleet().stdioServer("legacy-stdio");
    const prompts = await runCli(["prompts", "--json", "--", s.command, ...s.args]);
    assert.equal(prompts.code, 0, prompts.stderr);
    assert.ok(
      (JSON.parse(prompts.stdout) as { prompts: { name: string }[] }).prompts.some((p) => p.name === "greet"),
    );
    const got = await runCli(["prompt", "greet", "name=Ada", "--json", "--", s.command, ...s.args]);
    assert.equal(got.code, 0, got.stderr);
    assert.match(got.stdout, /Ada/);
  });

  test("binary contents are named on a terminal, written to a file or stdout only with -o", async () => {
    const named = await runCli(["read", "demo://logo", "--", server.command, ...server.args]);
    assert.equal(named.code, 0, named.stderr);
    assert.match(named.stdout, /\[binary image\/png demo:\/\/logo\]/);
    const dir = mkdtempSync(join(tmpdir(), "tether-read-"));
    const file = join(dir, "logo.png");
    const toFile = await runCli(["read", "demo://logo", "-o", file, "--", server.command, ...server.args]);
    assert.equal(toFile.code, 0, toFile.stderr);
    assert.equal(toFile.stdout, "");
    assert.deepEqual(readFileSync(file), BLOB);
    const bad = await runCli([
      "read",
      "demo://logo",
      "-o",
      join(dir, "missing", "x.png"),
      "--",
      server.command,
      ...server.args,
    ]);
    assert.equal(bad.code, 2, "an unwritable --output is a config error");
  });
});
