/**
 * `tether skill -o DIR`: a verified skill written as a folder, all or nothing. The files go into a
 * fresh temporary folder beside DIR (in DIR's parent, so the last step is a rename on one file
 * system), which becomes DIR only once every file is written; on any failure it is removed and
 * DIR is as it was. Every path is checked again here, whatever the library already checked: a
 * relative path of plain segments (no `..`, `.`, empty, absolute or drive segment, no NUL,
 * backslash or control character, none longer than 255 bytes), landing inside the folder; files are
 * created exclusively, never through a link, never executable; the total is bounded. DIR itself
 * must not exist, or be an empty folder (never a link).
 */
import {
  chmodSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { basename, dirname, isAbsolute, join, resolve, sep } from "node:path";
import type { LoadedSkillFile } from "../client/results.ts";
import { SKILL_LIMITS } from "../client/skills.ts";
import { configError } from "../errors/failures.ts";
import { TetherError } from "../errors/tether-error.ts";

const MAX_SEGMENT_BYTES = 255;
const MAX_PATH_BYTES = 1024;

/** The segments of a file's path, or a `config` error naming why it cannot be written. */
function segmentsOf(path: string): string[] {
  const bad = () =>
    configError("invalid_output", "the skill names a file path that cannot be written inside its folder");
  if (typeof path !== "string" || path === "" || isAbsolute(path) || Buffer.byteLength(path) > MAX_PATH_BYTES)
    throw bad();
  const segments = path.split("/");
  for (const s of segments)
    if (
      s === "" ||
      s === "." ||
      s === ".." ||
      // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
      /[\\:\u0000-\u001f\u007f]/.test(s) ||
      Buffer.byteLength(s) > MAX_SEGMENT_BYTES
    )
      throw bad();
  return segments;
}

/** Refuses a DIR that exists, unless it is an empty folder (not a link). */
function checkTarget(dir: string): void {
  let stat: ReturnType<typeof lstatSync> | undefined;
  try {
    stat = lstatSync(dir);
  } catch (cause) {
    if ((cause as NodeJS.ErrnoException).code !== "ENOENT")
      throw configError("output_unwritable", "the -o folder could not be examined", cause);
  }
  if (stat && (!stat.isDirectory() || readdirSync(dir).length > 0))
    throw configError("output_exists", "the -o folder already exists and is not an empty folder");
  let parent: ReturnType<typeof lstatSync>;
  try {
    parent = lstatSync(dirname(dir));
  } catch (cause) {
    throw configError("output_unwritable", "the folder that would hold the -o folder does not exist", cause);
  }
  if (!parent.isDirectory()) throw configError("output_unwritable", "the -o folder's parent is not a folder");
}

/** Writes `files` as the folder `dir`; returns the bytes written. */
export function writeSkillFolder(dir: string, files: readonly LoadedSkillFile[]): number {
  const target = resolve(dir);
  if (target === dirname(target)) throw configError("invalid_output", "-o must name a folder to create");
  checkTarget(target);
  const total = files.reduce((sum, f) => sum + f.bytes.byteLength, 0);
  if (total > SKILL_LIMITS.bytes)
    throw configError("invalid_output", `the skill holds more than ${SKILL_LIMITS.bytes} bytes`);
  const plan = files.map((f) => ({ segments: segmentsOf(f.path), bytes: f.bytes }));
  let temp: string;
  try {
    temp = mkdtempSync(join(dirname(target), `.${basename(target)}.tether-`));
  } catch (cause) {
    throw configError("output_unwritable", "no temporary folder could be made beside the -o folder", cause);
  }
  try {
    for (const { segments, bytes } of plan) {
      const path = resolve(temp, ...segments);
      if (!path.startsWith(temp + sep))
        throw configError("invalid_output", "a skill file would land outside its folder");
      mkdirSync(dirname(path), { recursive: true, mode: 0o755 });
      // Exclusive: a file is never written twice, nor through anything already there.
      writeFileSync(path, bytes, { flag: "wx", mode: 0o644 });
    }
    chmodSync(temp, 0o755);
    renameSync(temp, target);
  } catch (cause) {
    rmSync(temp, { recursive: true, force: true });
    if (cause instanceof TetherError) throw cause;
    throw configError("output_unwritable", "the skill folder could not be written", cause);
  }
  return total;
}
