import { chmodSync, readFileSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { writeFileAtomic } from "../files/atomic-write.ts";

/** Tokens obtained for one MCP server, and what is needed to refresh them without discovery. */
export interface ServerTokens {
  kind: "tokens";
  /** The resource indicator the tokens were issued for (RFC 8707). */
  resource: string;
  /** The issuer of the authorization server that issued them; they are used with no other. */
  issuer: string;
  tokenEndpoint: string;
  clientId: string;
  /** How the client authenticates at the token endpoint. */
  authMethod: ClientAuthMethod;
  accessToken: string;
  refreshToken?: string;
  /** Wall-clock expiry of the access token, in ms since the epoch; absent when none was given. */
  expiresAt?: number;
  /** The scopes granted (or requested, when the server did not say), space-separated. */
  scope?: string;
}

/** A client registered dynamically with one authorization server (RFC 7591), reused while it fits. */
export interface RegisteredClient {
  kind: "client";
  issuer: string;
  clientId: string;
  clientSecret?: string;
  authMethod: ClientAuthMethod;
  /** The loopback redirect URI it was registered with. */
  redirectUri?: string;
}

export type ClientAuthMethod = "none" | "client_secret_basic" | "client_secret_post" | "private_key_jwt";

export type AuthRecord = ServerTokens | RegisteredClient;

/**
 * Where tokens and dynamic registrations are kept, by key: `serverKey(url)` for a server's tokens,
 * `clientKey(issuer)` for a registration. The library keeps them in memory for the process; the
 * CLI keeps them in a file only its user can read. Methods may be synchronous or return promises.
 */
export interface TokenStore {
  get(key: string): AuthRecord | undefined | Promise<AuthRecord | undefined>;
  set(key: string, record: AuthRecord): void | Promise<void>;
  delete(key: string): void | Promise<void>;
}

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
