/** Where the CLI writes; tests pass buffers. */
export interface Io {
  stdout: (text: string) => void;
  /** Raw bytes for stdout (a binary resource with `--output -`). */
  stdoutBytes?: (bytes: Uint8Array) => void;
  stderr: (text: string) => void;
  env: NodeJS.ProcessEnv;
  isTty: boolean;
  /** Whether stderr is a terminal (the stage line is shown there, and only there). */
  stderrIsTty?: boolean;
  columns?: number;
  signal?: AbortSignal;
}
