import { terminalLine } from "../errors/terminal-text.ts";

/**
 * One line on a terminal's stderr that a long call rewrites in place (progress, a task's status)
 * and erases before the result prints. The text is sanitized; its own CR and erase-line are the
 * only control sequences written.
 */
export class StatusLine {
  readonly #write: (text: string) => void;
  #shown = false;

  constructor(write: (text: string) => void) {
    this.#write = write;
  }

  show(text: string): void {
    this.#shown = true;
    this.#write(`\r\x1b[K${terminalLine(text).slice(0, 200)}`);
  }

  /** Erases the line; idempotent. */
  clear(): void {
    if (this.#shown) this.#write("\r\x1b[K");
    this.#shown = false;
  }
}
