// The page's calls to the explorer's API (same origin; the cookie is the credential).

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type Obj = { [key: string]: Json };

export interface Answer extends Obj {
  ok: boolean;
}

/** POSTs `body` to /api/`op`; a failure is `{ ok: false, error }`, never a throw. */
export async function post(op: string, body: Obj, signal?: AbortSignal): Promise<Answer> {
  try {
    const res = await fetch(`/api/${op}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
      ...(signal ? { signal } : {}),
    });
    const doc = (await res.json()) as Answer;
    return res.ok ? doc : { ok: false, error: doc.error ?? { message: `HTTP ${res.status}` } };
  } catch (error) {
    return { ok: false, error: { message: String((error as Error).message ?? error) } };
  }
}

export async function get(path: string): Promise<Obj> {
  const res = await fetch(path);
  return (await res.json()) as Obj;
}

export const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
export const strOf = (v: unknown, fallback = ""): string => (typeof v === "string" ? v : fallback);

/** An error record in one line, as the CLI prints it: message [code/reason at stage, phase]. */
export function errorLine(e: unknown): string {
  if (!isObj(e)) return "error";
  const where = e.code
    ? ` [${strOf(e.code)}/${strOf(e.reason)} at ${strOf(e.stage)}, ${strOf(e.phase)}]`
    : "";
  return `error: ${strOf(e.message, "failed")}${where}`;
}
