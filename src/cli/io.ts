/** Where the CLI writes; tests pass buffers. */
export interface Io {
  stdout: (text: string) => void;
  /** Raw bytes for stdout (a binary resource with `--output -`). */
  stdoutBytes?: (bytes: Uint8Array) => void;
  /** Writes to stdout at once, for output that streams (`watch`); else stdout is written at the end. */
  stdoutNow?: (text: string) => void;
  /** Writes what stdout holds now: the result is whole, and closing the connection cannot change it. */
  flush?: () => void;
  stderr: (text: string) => void;
  env: NodeJS.ProcessEnv;
  isTty: boolean;
  /** Whether stderr is a terminal (the stage line is shown there, and only there). */
  stderrIsTty?: boolean;
  columns?: number;
  /** Stderr's width, when it is a terminal (`--trace` draws its waterfall there). */
  stderrColumns?: number;
  signal?: AbortSignal;
  /** Stdin's text, bounded (`--args-file -`). */
  readStdin?: () => Promise<string>;
  /** Asks the person at the terminal for one line (config `${input:ID}`); absent off a terminal. */
  askLine?: (prompt: string) => string;
  /** Asks the person at the terminal for one line without blocking (server elicitation); absent off a terminal. */
  askAsync?: (prompt: string, signal: AbortSignal) => Promise<string>;
}
