/** `tether probe`: establishment only, for every target given, reported side by side. */
import { configError } from "../../errors/failures.ts";
import type { Command } from "../command.ts";
import { causes } from "../error-line.ts";
import { EXIT_STATUS } from "../exit-codes.ts";
import { CONNECTION } from "../flag-table.ts";

export const command: Command = {
  name: "probe",
  usage: "tether probe <target>... [options]",
  summary: `Establishes only, several targets at once, and reports era, negotiated version, transport,
attempts and time per stage for each.`,
  examples: `
tether probe http://a.local/mcp http://b.local/mcp
tether probe my-server --json
tether probe --max-protocol-version 2025-11-25 -- node server.js`,
  flags: CONNECTION,
  async run(ctx) {
    const { inv, json, redactor } = ctx;
    // Every target given is probed: the named ones and, after --, the stdio command.
    const targets: (string | undefined)[] = [...inv.positionals, ...(inv.stdio ? [undefined] : [])];
    ctx.spawned = inv.stdio?.[0];
    if (targets.length === 0) throw configError("invalid_target", "probe needs at least one target");
    // One after another, so a bad target is reported in the order given.
    const built = [];
    for (const t of targets) {
      const { options } = await ctx.connection(t, t === undefined ? inv : { ...inv, stdio: undefined });
      built.push({ label: t ?? inv.stdio![0]!, options });
    }
    const { probeAll, PROBE_LEGEND } = await import("../probe.ts");
    const report = await probeAll(built, redactor, ctx.style);
    ctx.io.stdout(json ? ctx.jsonOut({ results: report.rows }) : redactor.redactSecrets(report.table));
    // On a terminal the marks are explained under the table; piped output stays the table alone.
    if (!json && ctx.io.isTty) {
      ctx.io.stdout(PROBE_LEGEND);
    }
    if (report.firstError) {
      ctx.writeError(
        { ...report.firstError.recordFor(redactor) },
        { hasCause: causes(report.firstError, redactor).length > 0 },
      );
      return EXIT_STATUS[report.firstError.code];
    }
    return 0;
  },
};
