/**
 * A progress notification as the CLI shows it: the NDJSON record of `--events` and `watch --json`
 * (`{"type":"progress","progressToken":…,"progress":3,"total":10,"message":…}`), and the words of
 * the status line. One place, so a call one-shot, a call on `@NAME` and `watch` say the same.
 */
import type { JsonValue } from "../jsonrpc/messages.ts";

export interface ProgressFields {
  progressToken: string | number;
  progress: number;
  total?: number;
  message?: string;
}

/** The record; absent fields are left out. Redacting and sanitizing are the writer's. */
export function progressRecord(p: ProgressFields): Record<string, JsonValue> {
  return {
    type: "progress",
    progressToken: p.progressToken,
    progress: p.progress,
    ...(p.total !== undefined ? { total: p.total } : {}),
    ...(p.message !== undefined ? { message: p.message } : {}),
  };
}

/** `progress 3/10 message`: a call's status line. */
export function progressStatus(p: Omit<ProgressFields, "progressToken">): string {
  return `progress ${p.progress}${p.total !== undefined ? `/${p.total}` : ""}${p.message ? ` ${p.message}` : ""}`;
}
