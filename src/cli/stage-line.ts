import { terminalLine } from "../errors/terminal-text.ts";
import type { LifecycleEvent } from "../lifecycle/events.ts";

/** How long establishment may take before the stage line appears. */
export const STAGE_LINE_DELAY_MS = 400;
const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/**
 * A one-line spinner on a terminal's stderr, naming the stage establishment is in, shown only
 * once it has taken longer than a moment and erased before anything else is written. Its own
 * control sequences (CR, erase line) are the only ones it writes: the stage name is sanitized.
 */
export class StageLine {
  readonly #write: (text: string) => void;
  #stage = "starting";
  #frame = 0;
  #shown = false;
  #timer: NodeJS.Timeout | undefined;
  #done = false;

  constructor(write: (text: string) => void) {
    this.#write = write;
    this.#timer = setTimeout(() => this.#tick(), STAGE_LINE_DELAY_MS);
    this.#timer.unref();
  }

  event(e: LifecycleEvent): void {
    if (e.type === "stage_start") this.#stage = e.stage;
    if (e.type === "established") this.clear();
  }

  #tick(): void {
    if (this.#done) return;
    this.#shown = true;
    this.#write(
      `\r\x1b[K${FRAMES[this.#frame++ % FRAMES.length]} connecting: ${terminalLine(this.#stage.replace(/_/g, " "))}…`,
    );
    this.#timer = setTimeout(() => this.#tick(), 80);
    this.#timer.unref();
  }

  /** Stops and erases the line; idempotent. */
  clear(): void {
    this.#done = true;
    if (this.#timer) clearTimeout(this.#timer);
    if (this.#shown) this.#write("\r\x1b[K");
    this.#shown = false;
  }
}
