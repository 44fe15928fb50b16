/**
 * Skills (SEP-2640, the `io.modelcontextprotocol/skills` extension): a server that declares the
 * extension lists its skills with `skills/list` (paged) and gives one entry with `skills/get`; each
 * entry carries the skill's front matter and a manifest of its files (`uri`, `sha256:` digest,
 * size); the files themselves are resources, read with `resources/read`.
 *
 * Nothing is fetched ahead of need: listing reads entries only. Loading reads the skill's files,
 * `SKILL.md` first, and hands over nothing until every file matched its entry: its size, its
 * digest, and for `SKILL.md` its front matter, field by field. The manifest is checked before
 * the first read: every path confined to the skill's folder (no `..`, no absolute or empty
 * segment, no control character, no name too long, no two paths one folder cannot hold), at most
 * 512 files and 16 MiB in all (the extension's limits), the name the spec's. Each read's reply is
 * bounded by the size the entry declares, so a server cannot make a load cost more than it said.
 */
import { createHash } from "node:crypto";
import { configError, limitError, protocolError, type Where } from "../errors/failures.ts";
import type { JsonObject } from "../jsonrpc/messages.ts";
import { type Extensions, SKILLS_EXTENSION } from "../protocol/extensions.ts";
import type { LoadSkillOptions, OperationOptions } from "./api.ts";
import type { ListSpec } from "./listing.ts";
import type { LoadedSkill, LoadedSkillFile, ReadResourceResult, Skill, SkillFile } from "./results.ts";
import { isObject } from "./shapes.ts";
import { FrontMatterError, frontMatterOf, sameJson } from "./skill-frontmatter.ts";

/** The extension's limits per skill: files (SKILL.md included) and their total size in bytes. */
export const SKILL_LIMITS = { files: 512, bytes: 16 * 1024 * 1024 } as const;

/** The `skills/list` pages, as the other lists are read (listing.ts). */
export const SKILLS: ListSpec<Skill> = {
  method: "skills/list",
  key: "skills",
  stage: "call",
  phase: "call",
  admit: admitSkill,
};

/** A listed entry as the client keeps it, or undefined when it is not one (it is left out). */
export function admitSkill(raw: JsonObject): Skill | undefined {
  const { uri, frontmatter: fm, resources } = raw;
  if (typeof uri !== "string" || !isObject(fm)) return undefined;
  if (typeof fm.name !== "string" || typeof fm.description !== "string") return undefined;
  let files: SkillFile[] | "dynamic";
  if (resources === "dynamic") files = "dynamic";
  else if (Array.isArray(resources) && resources.every(isSkillFile))
    files = resources.map(({ uri, digest, size }) => ({ uri, digest, size }));
  else return undefined;
  return { uri, name: fm.name, description: fm.description, frontmatter: fm, resources: files };
}

function isSkillFile(v: unknown): v is JsonObject & SkillFile {
  return (
    isObject(v) &&
    typeof v.uri === "string" &&
    typeof v.digest === "string" &&
    typeof v.size === "number" &&
    Number.isSafeInteger(v.size) &&
    v.size >= 0
  );
}

/** What loading needs of a client: the server's declaration, the skills requests, resource reads. */
export interface SkillHost {
  readonly serverExtensions: Extensions;
  listSkills(options?: OperationOptions): Promise<Skill[]>;
  getSkill(uri: string, options?: OperationOptions): Promise<Skill>;
  readResource(uri: string, options?: OperationOptions): Promise<ReadResourceResult>;
}

const WHERE: Where = { stage: "call", phase: "call", effect: "none" };

/** Skills requests go only to a server that declared the extension. */
export function requireSkills(extensions: Extensions): void {
  if (!Object.hasOwn(extensions, SKILLS_EXTENSION))
    throw protocolError(
      WHERE,
      "skills_not_offered",
      `the server does not declare the skills extension (${SKILLS_EXTENSION})`,
    );
}

/** The result of `skills/get`, admitted. */
export function skillOf(raw: JsonObject): Skill {
  const skill = isObject(raw.skill) ? admitSkill(raw.skill) : undefined;
  if (!skill) throw protocolError(WHERE, "malformed_result", "the skills/get result held no skill entry");
  return skill;
}

/** A skill name as the Agent Skills specification has it: 1-64 lowercase letters, digits, single inner hyphens. */
const SKILL_NAME = /^[a-z0-9](?:[a-z0-9]|-(?!-))*$/;
const DIGEST = /^sha256:[0-9a-f]{64}$/;
/** Longest path segment and path we write (bytes of UTF-8), and deepest folder. */
const MAX_SEGMENT_BYTES = 255;
const MAX_PATH_BYTES = 1024;
const MAX_DEPTH = 32;

/** One file to read: where it goes in the folder, and what it must be. */
interface Planned extends SkillFile {
  path: string;
}

const refused = (skill: Skill, what: string) =>
  protocolError(WHERE, "skill_path_refused", `the skill "${skill.name}" lists ${what}`);

/**
 * The files of `skill` to read, `SKILL.md` first, once the entry is found sound: verifiable (not
 * dynamic), within the limits, each path confined to the skill's folder.
 */
export function planLoad(skill: Skill, maxBytes: number): Planned[] {
  if (skill.resources === "dynamic")
    throw protocolError(
      WHERE,
      "skill_unverifiable",
      `the skill "${skill.name}" is generated by the server (resources: "dynamic"), so its files cannot be verified`,
    );
  const files = skill.resources;
  if (files.length > SKILL_LIMITS.files)
    throw limitError(
      WHERE,
      "skill_too_large",
      `the skill "${skill.name}" lists ${files.length} files, more than ${SKILL_LIMITS.files}`,
      undefined,
      {},
    );
  const total = files.reduce((sum, f) => sum + f.size, 0);
  if (total > maxBytes)
    throw limitError(
      WHERE,
      "skill_too_large",
      `the skill "${skill.name}" holds ${total} bytes, more than ${maxBytes}`,
      total,
      { maxResponseBytes: maxBytes },
    );
  if (!skill.uri.endsWith("/SKILL.md")) throw refused(skill, "an entry URI that is not a SKILL.md");
  const root = skill.uri.slice(0, -"/SKILL.md".length);
  const folder = root.slice(root.lastIndexOf("/") + 1);
  if (!SKILL_NAME.test(skill.name) || skill.name.length > 64)
    throw refused(skill, "a name that is not a skill name (1-64 lowercase letters, digits and hyphens)");
  if (folder !== skill.name) throw refused(skill, `a name other than its folder's`);
  const planned: Planned[] = [];
  const taken = new Map<string, string>();
  for (const file of files) {
    if (!DIGEST.test(file.digest)) throw refused(skill, "a digest that is not sha256:<64 hex digits>");
    if (!file.uri.startsWith(`${root}/`)) throw refused(skill, "a file outside its folder");
    const path = pathOf(file.uri.slice(root.length + 1));
    if (path === undefined)
      throw refused(skill, "a file path that could leave its folder or cannot be written");
    // Two paths one folder cannot hold apart (`a` and `A` on a case-insensitive disk, `a` and `a/b`).
    const key = path.normalize("NFC").toLowerCase();
    if (taken.has(key)) throw refused(skill, "the same file twice");
    taken.set(key, path);
    planned.push({ ...file, path });
  }
  for (const key of taken.keys()) {
    const segments = key.split("/");
    for (let i = 1; i < segments.length; i++)
      if (taken.has(segments.slice(0, i).join("/"))) throw refused(skill, "a file where it lists a folder");
  }
  const main = planned.findIndex((f) => f.path === "SKILL.md");
  if (main < 0 || planned[main]!.uri !== skill.uri) throw refused(skill, "no SKILL.md among its files");
  return [planned[main]!, ...planned.filter((_, i) => i !== main)];
}

/**
 * The relative path a file URI's tail names, each segment percent-decoded, or undefined when it
 * could leave the folder or is not a path every file system writes: an empty, `.` or `..` segment,
 * a backslash, NUL or other control character, a query or fragment, a segment or path too long.
 */
function pathOf(tail: string): string | undefined {
  if (tail.includes("?") || tail.includes("#")) return undefined;
  const raw = tail.split("/");
  if (raw.length > MAX_DEPTH) return undefined;
  const segments: string[] = [];
  for (const r of raw) {
    let s: string;
    try {
      s = decodeURIComponent(r);
    } catch {
      return undefined;
    }
    // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
    if (s === "" || s === "." || s === ".." || /[/\\:\u0000-\u001f\u007f-\u009f]/.test(s)) return undefined;
    if (Buffer.byteLength(s, "utf8") > MAX_SEGMENT_BYTES) return undefined;
    segments.push(s);
  }
  const path = segments.join("/");
  return Buffer.byteLength(path, "utf8") > MAX_PATH_BYTES ? undefined : path;
}

/** The reply ceiling for reading a file of `size` bytes: base64 or JSON-escaped text, and the envelope. */
const replyCeiling = (size: number) => size * 6 + 64 * 1024;

/**
 * Loads the skill named `nameOrUri` (a skill name, or the URI of its `SKILL.md`): its entry (from
 * `skills/get` for a URI; from the listing for a name, which must name exactly one skill), then
 * its files, each checked against the entry before the next is read.
 */
export async function loadSkill(
  host: SkillHost,
  nameOrUri: string,
  options: LoadSkillOptions = {},
): Promise<LoadedSkill> {
  if (typeof nameOrUri !== "string" || nameOrUri === "")
    throw configError("invalid_option", "the skill must be named by a non-empty name or URI");
  const maxBytes = options.maxBytes ?? SKILL_LIMITS.bytes;
  if (!Number.isSafeInteger(maxBytes) || maxBytes <= 0 || maxBytes > SKILL_LIMITS.bytes)
    throw configError(
      "invalid_limit",
      `maxBytes must be a positive whole number of bytes, at most ${SKILL_LIMITS.bytes}`,
    );
  requireSkills(host.serverExtensions);
  const { maxBytes: _, ...operation } = options;
  const skill = nameOrUri.includes("://")
    ? await host.getSkill(nameOrUri, operation)
    : await byName(host, nameOrUri, operation);
  const plan = planLoad(skill, maxBytes);
  const files: LoadedSkillFile[] = [];
  let markdown = "";
  for (const file of plan) {
    const read = await host.readResource(file.uri, {
      ...operation,
      maxResponseBytes: Math.min(
        operation.maxResponseBytes ?? Number.MAX_SAFE_INTEGER,
        replyCeiling(file.size),
      ),
    });
    const loaded = contentOf(skill, file, read);
    if (file.path === "SKILL.md") {
      markdown = new TextDecoder("utf-8", { fatal: false }).decode(loaded.bytes);
      let frontmatter: JsonObject;
      try {
        frontmatter = frontMatterOf(markdown);
      } catch (error) {
        if (!(error instanceof FrontMatterError)) throw error;
        throw mismatch(
          skill,
          "skill_frontmatter_mismatch",
          `its SKILL.md front matter could not be read (${error.message})`,
        );
      }
      if (!sameJson(frontmatter, skill.frontmatter))
        throw mismatch(
          skill,
          "skill_frontmatter_mismatch",
          "its SKILL.md front matter differs from its entry",
        );
    }
    files.push(loaded);
  }
  return { skill, files, markdown };
}

async function byName(host: SkillHost, name: string, options: OperationOptions): Promise<Skill> {
  const found = (await host.listSkills(options)).filter((s) => s.name === name);
  if (found.length === 1) return found[0]!;
  if (found.length === 0)
    throw configError("unknown_skill", `the server lists no skill named "${name.slice(0, 80)}"`);
  throw configError(
    "ambiguous_skill",
    `the server lists ${found.length} skills named "${name.slice(0, 80)}"; name one by the URI of its SKILL.md`,
  );
}

const mismatch = (skill: Skill, reason: string, what: string) =>
  protocolError(
    { ...WHERE, effect: "done" },
    reason,
    `the skill "${skill.name}" failed verification: ${what}`,
  );

/** The bytes `read` holds for `file`, once they match its size and digest. */
function contentOf(skill: Skill, file: Planned, read: ReadResourceResult): LoadedSkillFile {
  const mine = read.contents.filter((c) => c.uri === file.uri);
  const content = mine.length === 1 ? mine[0]! : read.contents.length === 1 ? read.contents[0]! : undefined;
  if (!content)
    throw mismatch(skill, "skill_size_mismatch", `${file.path} was not among what the server read`);
  let bytes: Uint8Array;
  if ("text" in content && typeof content.text === "string") bytes = new TextEncoder().encode(content.text);
  else if ("blob" in content && typeof content.blob === "string") bytes = Buffer.from(content.blob, "base64");
  else throw mismatch(skill, "skill_size_mismatch", `${file.path} came without text or blob`);
  if (bytes.byteLength !== file.size)
    throw mismatch(
      skill,
      "skill_size_mismatch",
      `${file.path} holds ${bytes.byteLength} bytes, its entry says ${file.size}`,
    );
  const digest = `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
  if (digest !== file.digest)
    throw mismatch(skill, "skill_digest_mismatch", `${file.path} does not match the digest its entry gives`);
  const out: LoadedSkillFile = { path: file.path, uri: file.uri, bytes: new Uint8Array(bytes) };
  if (typeof content.mimeType === "string") out.mimeType = content.mimeType;
  return out;
}
