import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const TALLY = fileURLToPath(new URL("../scripts/spawn-tally.mjs", import.meta.url));
/** How long the tally file must stay unchanged before the count is read. */
const SETTLE_MS = 150;
const SETTLE_MAX_MS = 3000;

export interface StdioTally {
  spawns: number;
  /** Messages (lines) the server processes read from the client, all processes together. */
  messages: number;
}

/**
 * A server command wrapped with the spawn tally. The command line is the same for every count
 * (so an era hint stored under it applies to the next count); the file is emptied between counts.
 * Only the untimed counting pass uses it.
 */
export class StdioTallier {
  readonly #dir = mkdtempSync(join(tmpdir(), "tether-bench-tally-"));
  readonly #file = join(this.#dir, "tally.jsonl");
  readonly target: { kind: "stdio"; command: string; args: string[] };

  constructor(server: { command: string; args: readonly string[] }) {
    this.target = {
      kind: "stdio",
      command: server.command,
      args: ["--import", TALLY, ...server.args, `--tally=${this.#file}`],
    };
  }

  /** Runs `body` once against the wrapped command and reports what the server side saw. */
  async count(body: (target: StdioTallier["target"]) => Promise<void>): Promise<StdioTally> {
    writeFileSync(this.#file, "");
    await body(this.target);
    // Exit lines come from processes that may still be on their way out after close().
    let last = this.#read();
    for (let waited = 0; waited < SETTLE_MAX_MS; waited += SETTLE_MS) {
      await new Promise((r) => setTimeout(r, SETTLE_MS));
      const now = this.#read();
      if (now === last && now !== "") break;
      last = now;
    }
    const records = last
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { lines: number });
    return { spawns: records.length, messages: records.reduce((sum, r) => sum + r.lines, 0) };
  }

  dispose(): void {
    rmSync(this.#dir, { recursive: true, force: true });
  }

  #read(): string {
    try {
      return readFileSync(this.#file, "utf8");
    } catch {
      return "";
    }
  }
}

export function formatTally(t: StdioTally): string {
  return `${t.spawns} spawn${t.spawns === 1 ? "" : "s"}, ${t.messages} msg${t.messages === 1 ? "" : "s"}`;
}
