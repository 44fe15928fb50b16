import { chmodSync, readFileSync, statSync } from "node:fs";
import { writeFileAtomic } from "./atomic-write.ts";

/** Records by key, in memory: what the library keeps for the process when the caller brings no store. */
export class MemoryRecords<T> {
  readonly #map = new Map<string, T>();
  get(key: string): T | undefined {
    return this.#map.get(key);
  }
  set(key: string, record: T): void {
    this.#map.set(key, record);
  }
  delete(key: string): void {
    this.#map.delete(key);
  }
}

/** The format the file is written in; a file of any other version reads as empty. */
const FORMAT_VERSION = 1;

export interface RecordFileOptions<T> {
  /** The document's field that holds the records: `{ "version": 1, "<field>": { "<key>": record } }`. */
  field: string;
  /**
   * Which records a write keeps, given all of them in the file's order: the file's bound (the
   * oldest go first). Called inside the write, so with `quiet` its failure is the write's.
   */
  keep: (entries: [string, T][]) => [string, T][];
  /**
   * The file is owner-only (secrets): one others can read is tightened to 0600 when it is read,
   * and one that cannot be tightened reads as empty.
   */
  ownerOnly?: boolean;
  /** A failed write is ignored (a cache, where losing a record costs work, nothing more); else it throws. */
  quiet?: boolean;
}

/**
 * Records by key in one small versioned JSON file (tokens, era hints). Every write goes to a
 * temporary file renamed over the old one (writeFileAtomic, in a folder only the user can enter),
 * so concurrent writers may lose a record but never leave a torn file. A missing, torn or
 * unreadable file, or one of another version, reads as empty. Records come back as the file holds
 * them: checking one's shape is the caller's.
 */
export class RecordFile<T> {
  readonly path: string;
  readonly #o: RecordFileOptions<T>;

  constructor(path: string, options: RecordFileOptions<T>) {
    this.path = path;
    this.#o = options;
  }

  /** Every record in the file, in its order (a fresh object, free to change and write back). */
  read(): Record<string, T> {
    try {
      if (this.#o.ownerOnly && (statSync(this.path).mode & 0o077) !== 0) chmodSync(this.path, 0o600);
      const doc = JSON.parse(readFileSync(this.path, "utf8")) as Record<string, unknown> | null;
      const records = doc?.[this.#o.field];
      if (doc?.version === FORMAT_VERSION && typeof records === "object" && records !== null)
        return records as Record<string, T>;
    } catch {
      // Missing or torn: nothing stored.
    }
    return {};
  }

  /** Replaces the file with these records, bounded by `keep`. */
  write(records: Record<string, T>): void {
    try {
      const kept = this.#o.keep(Object.entries(records));
      writeFileAtomic(
        this.path,
        JSON.stringify({ version: FORMAT_VERSION, [this.#o.field]: Object.fromEntries(kept) }),
      );
    } catch (error) {
      if (!this.#o.quiet) throw error;
    }
  }

  /** Removes one record; the file is written only when it held one under that key. */
  delete(key: string): void {
    const records = this.read();
    if (!(key in records)) return;
    delete records[key];
    this.write(records);
  }
}
