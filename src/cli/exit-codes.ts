import type { ErrorCode } from "../errors/codes.ts";

/** The one table from error code to exit status (CLI.md). */
export const EXIT_STATUS: Readonly<Record<ErrorCode, number>> = {
  config: 2,
  connection: 3,
  protocol: 3,
  timeout: 4,
  limit: 5,
  unauthorized: 6,
  forbidden: 6,
  throttled: 7,
  upstream: 7,
  remote_error: 7,
  internal: 8,
  cancelled: 130,
};

/** A tool that ran and answered `isError: true`. */
export const EXIT_TOOL_ERROR = 1;
