import { chmodSync, readFileSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { writeFileAtomic } from "../files/atomic-write.ts";
import type { AuthRecord, TokenStore } from "../options/token-store.ts";

/** The key for a server's tokens: its origin and path (never its query, which may hold a key). */
export function serverKey(url: URL): string {
  return `server ${url.origin}${url.pathname}`;
}

/** The key for a client registered with an authorization server. */
export function clientKey(issuer: string): string {
  return `client ${issuer}`;
}

export class MemoryTokenStore implements TokenStore {
  readonly #map = new Map<string, AuthRecord>();
  get(key: string): AuthRecord | undefined {
    return this.#map.get(key);
  }
  set(key: string, record: AuthRecord): void {
    this.#map.set(key, record);
  }
  delete(key: string): void {
    this.#map.delete(key);
  }
}

/** Shared by every connect() in this process that brings no store of its own. */
export const processTokenStore = new MemoryTokenStore();

/** The user's config folder for tether (TETHER_CONFIG_DIR overrides it). */
export function configDir(env: NodeJS.ProcessEnv = process.env, platform = process.platform): string {
  if (env.TETHER_CONFIG_DIR) return env.TETHER_CONFIG_DIR;
  if (platform === "darwin") return join(homedir(), "Library", "Application Support", "tether");
  if (platform === "win32") return join(env.APPDATA ?? join(homedir(), "AppData", "Roaming"), "tether");
  return join(env.XDG_CONFIG_HOME ?? join(homedir(), ".config"), "tether");
}

interface FileShape {
  version: 1;
  records: Record<string, AuthRecord>;
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
  readonly #path: string;

  constructor(dir: string = configDir()) {
    this.#path = join(dir, "auth.json");
  }

  #read(): FileShape {
    try {
      if ((statSync(this.#path).mode & 0o077) !== 0) chmodSync(this.#path, 0o600);
      const doc = JSON.parse(readFileSync(this.#path, "utf8")) as FileShape;
      if (doc?.version === 1 && typeof doc.records === "object" && doc.records !== null) return doc;
    } catch {
      // Missing or torn: nothing stored.
    }
    return { version: 1, records: {} };
  }

  #write(doc: FileShape): void {
    const entries = Object.entries(doc.records).slice(-MAX_RECORDS);
    writeFileAtomic(this.#path, JSON.stringify({ version: 1, records: Object.fromEntries(entries) }));
  }

  get(key: string): AuthRecord | undefined {
    const record = this.#read().records[key];
    return isRecord(record) ? record : undefined;
  }

  set(key: string, record: AuthRecord): void {
    const doc = this.#read();
    delete doc.records[key];
    doc.records[key] = record;
    this.#write(doc);
  }

  delete(key: string): void {
    const doc = this.#read();
    if (!(key in doc.records)) return;
    delete doc.records[key];
    this.#write(doc);
  }
}
