import assert from "node:assert/strict";
import { test } from "node:test";
import { baseRedactor } from "../errors/redact.ts";
import { TetherError } from "../errors/tether-error.ts";
import {
  acceptsLegacyAnswer,
  chooseOrRefuse,
  chooseVersion,
  legacyAllowed,
  legacyRequestVersion,
  modernAllowed,
  modernRequestVersion,
  type VersionPolicy,
} from "./version-policy.ts";

const auto: VersionPolicy = { mode: "auto", ceiling: "2026-07-28" };
const ceiling = (v: "2025-11-25" | "2025-06-18"): VersionPolicy => ({ mode: "ceiling", ceiling: v });
const pin = (v: "2025-11-25" | "2026-07-28"): VersionPolicy => ({ mode: "pin", version: v, ceiling: v });

test("N4: a ceiling prefers itself, else the highest mutually supported lower version, never above", () => {
  assert.equal(
    chooseVersion(ceiling("2025-11-25"), ["2026-07-28", "2025-11-25", "2025-06-18"]),
    "2025-11-25",
  );
  assert.equal(chooseVersion(ceiling("2025-11-25"), ["2026-07-28", "2025-06-18"]), "2025-06-18");
  assert.equal(chooseVersion(ceiling("2025-06-18"), ["2026-07-28", "2025-11-25"]), undefined, "no overlap");
  assert.equal(acceptsLegacyAnswer(ceiling("2025-06-18"), "2025-11-25"), false);
  assert.equal(acceptsLegacyAnswer(ceiling("2025-11-25"), "2025-06-18"), true);
  assert.equal(
    modernAllowed(ceiling("2025-11-25")),
    false,
    "a ceiling below 2026-07-28 never sends server/discover",
  );
});

test("N3: a pin accepts only itself", () => {
  assert.equal(chooseVersion(pin("2025-11-25"), ["2026-07-28", "2025-06-18"]), undefined);
  assert.equal(chooseVersion(pin("2026-07-28"), ["2026-07-28"]), "2026-07-28");
  assert.equal(acceptsLegacyAnswer(pin("2025-11-25"), "2025-06-18"), false);
  assert.equal(acceptsLegacyAnswer(pin("2025-11-25"), "2025-11-25"), true);
  assert.equal(legacyAllowed(pin("2026-07-28")), false);
  assert.equal(modernAllowed(pin("2025-11-25")), false);
  assert.equal(modernRequestVersion(pin("2026-07-28")), "2026-07-28");
});

test("N1: auto takes the newest known version, ignoring unknown strings; a legacy answer must be legacy", () => {
  assert.equal(chooseVersion(auto, ["2099-01-01", "2026-07-28", "2025-11-25"]), "2026-07-28");
  assert.equal(chooseVersion(auto, ["2099-01-01"]), undefined);
  assert.equal(
    acceptsLegacyAnswer(auto, "2026-07-28"),
    false,
    "initialize never negotiates a modern version",
  );
  assert.equal(modernRequestVersion(auto), "2026-07-28");
});

test("N2, N4: the version each handshake asks for: initialize the newest legacy one allowed, discover the newest modern one", () => {
  const rows: [string, VersionPolicy, string, string][] = [
    ["auto", auto, "2025-11-25", "2026-07-28"],
    ["ceiling 2025-11-25", ceiling("2025-11-25"), "2025-11-25", "2026-07-28"],
    ["ceiling 2025-06-18", ceiling("2025-06-18"), "2025-06-18", "2026-07-28"],
    ["legacy pin", pin("2025-11-25"), "2025-11-25", "2025-11-25"],
    ["modern pin", pin("2026-07-28"), "2026-07-28", "2026-07-28"],
  ];
  for (const [name, policy, initialize, discover] of rows) {
    assert.equal(legacyRequestVersion(policy), initialize, `${name}: initialize`);
    assert.equal(modernRequestVersion(policy), discover, `${name}: server/discover`);
  }
});

test("N3, N4: no version in common is a version_mismatch naming both ranges, the server's text redacted", () => {
  const where = { stage: "probe" as const, redactor: baseRedactor };
  assert.equal(chooseOrRefuse(auto, ["2025-06-18"], where), "2025-06-18");
  assert.throws(
    () => chooseOrRefuse(ceiling("2025-06-18"), ["2026-07-28", "2099-01-01", 7], where),
    (e: unknown) =>
      e instanceof TetherError &&
      e.code === "protocol" &&
      e.reason === "version_mismatch" &&
      e.stage === "probe" &&
      /2024-11-05 to 2025-06-18/.test(e.message) &&
      /2026-07-28, 2099-01-01/.test(e.message),
  );
  assert.throws(() => chooseOrRefuse(pin("2025-11-25"), undefined, where), /offered nothing usable/);
});
