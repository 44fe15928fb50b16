import { connect } from "../connect/connect.ts";
import type { Redactor } from "../errors/redact.ts";
import { terminalLine } from "../errors/terminal-text.ts";
import { asTetherError, TetherError } from "../errors/tether-error.ts";
import type { ConnectOptions } from "../options/options.ts";
import { PLAIN, type Style, table } from "./render.ts";

/** What the probe table's marks mean: printed under it on a terminal (docs/cli.md says the same). */
export const PROBE_LEGEND = `legend: STAGES: each stage and its time in ms; ! marks the stage that failed
        HINT: used (a remembered era shortened detection), dropped (it proved wrong: detection
        ran afresh), none (nothing remembered, or probe's own fresh detection)
        -: not known, the target was not established; MS: the whole establishment, in ms
`;

/** How many targets are probed at once. */
export const PROBE_CONCURRENCY = 4;

export interface ProbeRow {
  target: string;
  outcome: "ok" | string;
  era: string | null;
  protocolVersion: string | null;
  transport: string | null;
  attempts: number;
  eraHint: string;
  elapsedMs: number;
  stages: { stage: string; ms: number; ok: boolean }[];
  error?: ReturnType<TetherError["toJSON"]>;
}

/**
 * A target as shown: an HTTP URL's origin and path only, a stdio command or a server's name
 * scrubbed; either way one line with every control visible (config files are not ours either).
 */
function shown(label: string, redactor: Redactor): string {
  try {
    const u = new URL(label);
    if (u.protocol === "http:" || u.protocol === "https:")
      return terminalLine(redactor.redactSecrets(`${u.origin}${u.pathname}`));
  } catch {
    // Not a URL: a command or a configured server's name.
  }
  return redactor.messageText(label);
}

async function probeOne(
  label: string,
  options: ConnectOptions,
  redactor: Redactor,
): Promise<{ row: ProbeRow; error?: TetherError }> {
  const started = performance.now();
  const stages: ProbeRow["stages"] = [];
  const onEvent = options.onEvent;
  try {
    const client = await connect({
      ...options,
      onEvent: (e) => {
        if (e.type === "stage_end") stages.push({ stage: e.stage, ms: Math.round(e.durationMs), ok: e.ok });
        onEvent?.(e);
      },
    });
    await client.close();
    return {
      row: {
        target: shown(label, redactor),
        outcome: "ok",
        era: client.era,
        protocolVersion: client.protocolVersion,
        transport: client.transportMode,
        attempts: client.attempts,
        eraHint: client.eraHint,
        elapsedMs: Math.round(performance.now() - started),
        stages,
      },
    };
  } catch (caught) {
    const error =
      caught instanceof TetherError
        ? caught
        : asTetherError(caught, { stage: "config", phase: "discovery", redactor });
    return {
      error,
      row: {
        target: shown(label, redactor),
        outcome: error.code,
        era: null,
        protocolVersion: null,
        transport: null,
        attempts: error.attempts,
        eraHint: "none",
        elapsedMs: Math.round(performance.now() - started),
        stages,
        error: error.recordFor(redactor),
      },
    };
  }
}

/** Probes every target, a few at a time, and reports each in the order given. */
export async function probeAll(
  targets: { label: string; options: ConnectOptions }[],
  redactor: Redactor,
  style: Style = PLAIN,
): Promise<{ rows: ProbeRow[]; table: string; firstError: TetherError | undefined }> {
  const results: { row: ProbeRow; error?: TetherError }[] = new Array(targets.length);
  let next = 0;
  const worker = async () => {
    while (next < targets.length) {
      const i = next++;
      const t = targets[i]!;
      results[i] = await probeOne(t.label, t.options, redactor);
    }
  };
  await Promise.all(Array.from({ length: Math.min(PROBE_CONCURRENCY, targets.length) }, worker));
  const rows = results.map((r) => r.row);
  const text = table(
    ["TARGET", "OUTCOME", "ERA", "VERSION", "TRANSPORT", "ATTEMPTS", "HINT", "MS", "STAGES"],
    rows.map((r) => [
      r.target,
      r.outcome === "ok" ? "ok" : `${r.outcome} (${r.error?.reason ?? ""} at ${r.error?.stage ?? ""})`,
      r.era ?? "-",
      r.protocolVersion ?? "-",
      r.transport ?? "-",
      String(r.attempts),
      r.eraHint,
      String(r.elapsedMs),
      r.stages.map((s) => `${s.stage} ${s.ms}${s.ok ? "" : "!"}`).join(", "),
    ]),
    style,
  );
  return { rows, table: text, firstError: results.find((r) => r.error)?.error };
}
