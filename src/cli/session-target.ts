/**
 * What a command needs to know about `@NAME` before it loads anything of sessions: whether the
 * target names one, and which flags a command on it may not use.
 */
import { configError } from "../errors/failures.ts";
import { validSessionName } from "../sessions/names.ts";
import { FIXED_AT_START } from "./flag-table.ts";

/** The name in `@NAME` (or a bare NAME), checked. */
export function sessionName(target: string): string {
  const name = target.startsWith("@") ? target.slice(1) : target;
  if (!validSessionName(name))
    throw configError("invalid_session_name", "a session name is 1-64 letters, digits, '.', '_' or '-'");
  return name;
}

/** Whether a target names a live session (`@NAME`). */
export function isSessionTarget(target: string | undefined): target is string {
  return target?.startsWith("@") === true;
}

/**
 * How a connection is made is settled when its session starts (the flags marked `fixed` in the flag
 * table); a command on `@NAME` that tries to change it is refused rather than silently ignored.
 * Budgets and ceilings stay the command's.
 */
export function checkSessionFlags(values: Record<string, unknown>): void {
  for (const flag of FIXED_AT_START)
    if (values[flag] !== undefined)
      throw configError(
        "inapplicable_flag",
        `--${flag} is fixed when a session starts; it does not apply to a command on @NAME`,
      );
}
