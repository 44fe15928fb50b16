import assert from "node:assert/strict";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { FileEraHints } from "../../src/cli/era-hint-file.ts";
import { runCli } from "../helpers/cli.ts";
import { useFleet } from "../helpers/fleet.ts";

interface Row {
  target: string;
  outcome: string;
  era: string | null;
  protocolVersion: string | null;
  transport: string | null;
  eraHint: string;
  stages: { stage: string }[];
}

describe("tether probe and the era hint file", () => {
  const fleet = useFleet([
    "legacy-sse-2024-11-05",
    "streamable-2025-06-18",
    "modern-2026-07-28",
    "legacy-stdio",
  ]);

  test("N7: probe reports era, version and transport per target, several at once, as JSON", async () => {
    const cache = mkdtempSync(join(tmpdir(), "tether-cache-"));
    const f = fleet();
    const urls = [
      f.http("legacy-sse-2024-11-05").url,
      f.http("streamable-2025-06-18").url,
      f.http("modern-2026-07-28").url,
    ];
    const run = await runCli(["probe", ...urls, "--json"], { env: { TETHER_CACHE_DIR: cache } });
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stderr, "");
    const { results } = JSON.parse(run.stdout) as { results: Row[] };
    assert.deepEqual(
      results.map((r) => [r.outcome, r.era, r.protocolVersion, r.transport]),
      [
        ["ok", "legacy", "2024-11-05", "sse"],
        ["ok", "legacy", "2025-06-18", "streamable-http"],
        ["ok", "modern", "2026-07-28", "streamable-http"],
      ],
    );
    for (const r of results) assert.ok(!r.target.includes("?"), "no query in the shown target");
  });

  test("N7: probe always detects afresh and refreshes the hint; other commands use it, --fresh does not", async () => {
    const cache = mkdtempSync(join(tmpdir(), "tether-cache-"));
    const url = fleet().http("streamable-2025-06-18").url;
    for (let i = 0; i < 2; i++) {
      const row = (
        JSON.parse((await runCli(["probe", url, "--json"], { env: { TETHER_CACHE_DIR: cache } })).stdout) as {
          results: Row[];
        }
      ).results[0]!;
      assert.ok(
        row.stages.some((s) => s.stage === "probe"),
        `probe run ${i + 1} detects afresh`,
      );
      assert.equal(row.eraHint, "none");
    }
    const tools = await runCli(["tools", url, "--json", "--events"], { env: { TETHER_CACHE_DIR: cache } });
    assert.equal(tools.code, 0);
    assert.ok(!tools.stderr.includes('"stage":"probe"'), "tether tools uses the hint probe refreshed");
    const fresh = await runCli(["tools", url, "--json", "--events", "--fresh"], {
      env: { TETHER_CACHE_DIR: cache },
    });
    assert.equal(fresh.code, 0, fresh.stderr);
    assert.ok(fresh.stderr.includes('"stage":"probe"'), "--fresh detects afresh");
    const file = readFileSync(join(cache, "era-hints.json"), "utf8");
    assert.ok(!file.includes("127.0.0.1"), "the hint file holds hashed keys, not targets");
  });

  test("N7: a stale hint never reaches probe's report, and a wrong hint is dropped by other commands", async () => {
    const cache = mkdtempSync(join(tmpdir(), "tether-cache-"));
    const url = fleet().http("modern-2026-07-28").url;
    // Plant a wrong hint: the modern server recorded as legacy HTTP+SSE (it upgraded since).
    const hints = new FileEraHints(cache);
    const { eraHintKey } = await import("../../src/protocol/era-hints.ts");
    const key = eraHintKey({ kind: "http", url: new URL(url) });
    hints.set(key, { era: "legacy", mode: "sse" });
    const run = JSON.parse(
      (await runCli(["probe", url, "--json"], { env: { TETHER_CACHE_DIR: cache } })).stdout,
    ) as { results: Row[] };
    assert.equal(run.results[0]!.era, "modern");
    assert.equal(run.results[0]!.eraHint, "none", "probe never consults the hint");
    assert.equal(new FileEraHints(cache).get(key)?.era, "modern", "probe refreshed the hint");
    hints.set(key, { era: "legacy", mode: "sse" });
    const tools = await runCli(["tools", url, "--json"], { env: { TETHER_CACHE_DIR: cache } });
    assert.equal(tools.code, 0, tools.stderr);
    assert.equal(new FileEraHints(cache).get(key)?.era, "modern", "the wrong hint was dropped and replaced");
  });

  test("N7: concurrent writers never tear the hint file", async () => {
    const cache = mkdtempSync(join(tmpdir(), "tether-cache-"));
    const f = fleet();
    const s = f.stdioServer("legacy-stdio");
    const runs = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        i % 2 === 0
          ? runCli(["probe", f.http("streamable-2025-06-18").url, "--json"], {
              env: { TETHER_CACHE_DIR: cache },
            })
          : runCli(["probe", "--json", "--", s.command, ...s.args], { env: { TETHER_CACHE_DIR: cache } }),
      ),
    );
    for (const r of runs) assert.equal(r.code, 0, r.stderr);
    const doc = JSON.parse(readFileSync(join(cache, "era-hints.json"), "utf8")) as {
      hints: Record<string, unknown>;
    };
    assert.ok(Object.keys(doc.hints).length >= 1);
  });

  test("K1: a failing target fails the run with its record; the others are still reported", async () => {
    const cache = mkdtempSync(join(tmpdir(), "tether-cache-"));
    const run = await runCli(
      ["probe", fleet().http("modern-2026-07-28").url, "http://127.0.0.1:9/mcp", "--json"],
      {
        env: { TETHER_CACHE_DIR: cache },
      },
    );
    assert.equal(run.code, 3);
    const { results } = JSON.parse(run.stdout) as { results: Row[] };
    assert.equal(results[0]!.outcome, "ok");
    assert.equal(results[1]!.outcome, "connection");
    const lines = run.stderr.trim().split("\n");
    assert.equal(lines.length, 1);
    assert.equal((JSON.parse(lines[0]!) as { code: string }).code, "connection");
  });
});
