import { homedir } from "node:os";
import { join } from "node:path";
import { MemoryRecords, RecordFile } from "../files/record-store.ts";
import type { AuthRecord, TokenStore } from "../options/token-store.ts";

/** The key for a server's tokens: its origin and path (never its query, which may hold a key). */
export function serverKey(url: URL): string {
  return `server ${url.origin}${url.pathname}`;
}

/** The key for a client registered with an authorization server. */
export function clientKey(issuer: string): string {
  return `client ${issuer}`;
}

export class MemoryTokenStore extends MemoryRecords<AuthRecord> implements TokenStore {}

/** Shared by every connect() in this process that brings no store of its own. */
export const processTokenStore = new MemoryTokenStore();

/** The user's config folder for tether (TETHER_CONFIG_DIR overrides it). */
export function configDir(env: NodeJS.ProcessEnv = process.env, platform = process.platform): string {
  if (env.TETHER_CONFIG_DIR) return env.TETHER_CONFIG_DIR;
  if (platform === "darwin") return join(homedir(), "Library", "Application Support", "tether");
  if (platform === "win32") return join(env.APPDATA ?? join(homedir(), "AppData", "Roaming"), "tether");
  return join(env.XDG_CONFIG_HOME ?? join(homedir(), ".config"), "tether");
}

/** The file never grows past this many records; the oldest written go first. */
const MAX_RECORDS = 1000;

function isRecord(value: unknown): value is AuthRecord {
  if (typeof value !== "object" || value === null) return false;
  const r = value as Record<string, unknown>;
  if (r.kind === "tokens")
    return (
      typeof r.accessToken === "string" && typeof r.issuer === "string" && typeof r.tokenEndpoint === "string"
    );
  return r.kind === "client" && typeof r.clientId === "string" && typeof r.issuer === "string";
}

/**
 * Tokens on disk: one JSON file (`auth.json`) in a folder only the user can enter (0700), itself
 * readable only by the user (0600). Every write goes to a temporary file renamed over the old
 * one, so concurrent writers may lose a record but never leave a torn file. A file others can
 * read is tightened when it is read; an unreadable one counts as empty. A failed write throws.
 */
export class FileTokenStore implements TokenStore {
  readonly #file: RecordFile<AuthRecord>;

  constructor(dir: string = configDir()) {
    this.#file = new RecordFile(join(dir, "auth.json"), {
      field: "records",
      keep: (entries) => entries.slice(-MAX_RECORDS),
      ownerOnly: true,
    });
  }

  get(key: string): AuthRecord | undefined {
    const record = this.#file.read()[key];
    return isRecord(record) ? record : undefined;
  }

  set(key: string, record: AuthRecord): void {
    const records = this.#file.read();
    // Written last, so that it is the newest: the bound drops the oldest written first.
    delete records[key];
    records[key] = record;
    this.#file.write(records);
  }

  delete(key: string): void {
    this.#file.delete(key);
  }
}
