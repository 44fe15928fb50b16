import { homedir } from "node:os";
import { join } from "node:path";
import { RecordFile } from "../files/record-store.ts";
import type { EraHint, EraHintStore, StoredDiscover } from "../protocol/era-hints.ts";

/** Hints older than this are ignored: servers get upgraded. */
const HINT_TTL_MS = 7 * 24 * 60 * 60 * 1000;
/** The file never grows past this many servers; the oldest go first. */
const MAX_HINTS = 500;
/**
 * A modern server's discover result is kept beside its hint only up to this size (as JSON): with
 * MAX_HINTS that bounds the file, and a larger one costs a `server/discover` next time, nothing more.
 */
const MAX_DISCOVER_CHARS = 16 * 1024;

/** A hint as the file holds it: when it was written beside what it says. */
type StoredHint = EraHint & { at: number };

/** The user's cache folder for tether (TETHER_CACHE_DIR overrides it). */
export function cacheDir(env: NodeJS.ProcessEnv = process.env, platform = process.platform): string {
  if (env.TETHER_CACHE_DIR) return env.TETHER_CACHE_DIR;
  if (platform === "darwin") return join(homedir(), "Library", "Caches", "tether");
  if (platform === "win32")
    return join(env.LOCALAPPDATA ?? join(homedir(), "AppData", "Local"), "tether", "cache");
  return join(env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "tether");
}

/**
 * The CLI's era hints, in one small JSON file (`era-hints.json`, a RecordFile) keyed by hashed
 * server identities; an unreadable file is treated as empty. Failures to write are ignored: a
 * read-only home or a full disk costs a probe next time, nothing more, for a hint is an
 * optimisation, never a requirement.
 */
export class FileEraHints implements EraHintStore {
  readonly #file: RecordFile<StoredHint>;

  constructor(dir: string = cacheDir()) {
    this.#file = new RecordFile(join(dir, "era-hints.json"), {
      field: "hints",
      keep: (entries) => entries.sort((a, b) => b[1].at - a[1].at).slice(0, MAX_HINTS),
      quiet: true,
    });
  }

  get(key: string): EraHint | undefined {
    const hint = this.#file.read()[key];
    if (!hint || Date.now() - hint.at > HINT_TTL_MS) return undefined;
    if (
      (hint.era !== "legacy" && hint.era !== "modern") ||
      !["stdio", "streamable-http", "sse"].includes(hint.mode)
    )
      return undefined;
    // The stored discover result's own checks (age, versions, the policy) are made where it is adopted.
    const discover = hint.era === "modern" ? storedDiscover(hint.discover) : undefined;
    return { era: hint.era, mode: hint.mode, ...(discover ? { discover } : {}) };
  }

  set(key: string, hint: EraHint): void {
    const hints = this.#file.read();
    const old = hints[key];
    const discover =
      hint.discover && JSON.stringify(hint.discover).length <= MAX_DISCOVER_CHARS ? hint.discover : undefined;
    if (
      old &&
      old.era === hint.era &&
      old.mode === hint.mode &&
      old.discover?.receivedAt === discover?.receivedAt &&
      Date.now() - old.at < HINT_TTL_MS / 2
    )
      return;
    hints[key] = { era: hint.era, mode: hint.mode, ...(discover ? { discover } : {}), at: Date.now() };
    this.#file.write(hints);
  }

  delete(key: string): void {
    this.#file.delete(key);
  }
}

/** A discover record read back from the file, if it has the shape one is written in. */
function storedDiscover(v: unknown): StoredDiscover | undefined {
  if (typeof v !== "object" || v === null) return undefined;
  const d = v as Partial<StoredDiscover>;
  if (typeof d.protocolVersion !== "string" || typeof d.receivedAt !== "number") return undefined;
  if (typeof d.result !== "object" || d.result === null || Array.isArray(d.result)) return undefined;
  return { protocolVersion: d.protocolVersion, result: d.result, receivedAt: d.receivedAt };
}

/**
 * A store that never offers a remembered era but keeps what detection finds: `probe` (which must
 * report the server as it is now) and `--fresh` detect afresh and refresh the hint for next time.
 */
export function afresh(store: EraHintStore): EraHintStore {
  return {
    get: () => undefined,
    set: (key, hint) => store.set(key, hint),
    delete: (key) => store.delete(key),
  };
}
