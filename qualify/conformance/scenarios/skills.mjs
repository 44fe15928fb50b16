// Skills over MCP (the io.modelcontextprotocol/skills extension), as a host uses them: list the
// skills, and retrieve a skill's files only when the skill is loaded. Each file is checked
// against the listing's entry before anything of it is used: its byte size, its digest, and for
// SKILL.md its YAML front matter field by field. A skill that fails any check is not loaded, and
// none of its other files are retrieved.
import { createHash } from "node:crypto";
import { isDeepStrictEqual } from "node:util";
import { parse as parseYaml } from "yaml";

const EXTENSION = "io.modelcontextprotocol/skills";
const MAX_LIST_PAGES = 20;

class SkillRejected extends Error {}

/** Every skill the server lists, following cursors (a bounded number of pages). */
async function listSkills(client) {
  const skills = [];
  let cursor;
  for (let page = 0; page < MAX_LIST_PAGES; page++) {
    const result = await client.request("skills/list", cursor ? { cursor } : {});
    if (!Array.isArray(result.skills)) throw new Error("skills/list returned no skills array");
    skills.push(...result.skills);
    cursor = typeof result.nextCursor === "string" ? result.nextCursor : undefined;
    if (!cursor) return skills;
  }
  throw new Error(`skills/list still had pages after ${MAX_LIST_PAGES}`);
}

/** A resource's bytes as received: text as UTF-8, a blob decoded from base64. */
async function fetchBytes(client, uri) {
  const { contents } = await client.readResource(uri);
  const item = contents?.find((c) => c.uri === uri) ?? contents?.[0];
  if (!item) throw new SkillRejected(`${uri}: the server returned no contents`);
  if (typeof item.text === "string") return Buffer.from(item.text, "utf8");
  if (typeof item.blob === "string") return Buffer.from(item.blob, "base64");
  throw new SkillRejected(`${uri}: contents with neither text nor blob`);
}

function verifyFile(file, bytes) {
  if (typeof file.size === "number" && bytes.length !== file.size)
    throw new SkillRejected(`${file.uri}: ${bytes.length} bytes where the listing says ${file.size}`);
  const [algorithm, expected] = String(file.digest ?? "").split(":");
  if (algorithm !== "sha256" || !expected)
    throw new SkillRejected(`${file.uri}: no sha256 digest to verify against`);
  const actual = createHash("sha256").update(bytes).digest("hex");
  if (actual !== expected.toLowerCase()) throw new SkillRejected(`${file.uri}: digest mismatch`);
}

/** SKILL.md's front matter, parsed: the YAML between the opening and closing `---` lines. */
function frontMatter(text) {
  const match = /^---\r?\n([\s\S]*?)\r?\n---(?:\r?\n|$)/.exec(text);
  if (!match) throw new SkillRejected("SKILL.md has no front matter");
  const data = parseYaml(match[1]);
  if (!data || typeof data !== "object" || Array.isArray(data))
    throw new SkillRejected("SKILL.md front matter is not a mapping");
  return data;
}

function compareFrontMatter(listed, fetched) {
  const keys = new Set([...Object.keys(listed ?? {}), ...Object.keys(fetched)]);
  for (const key of keys) {
    if (!isDeepStrictEqual(listed?.[key], fetched[key]))
      throw new SkillRejected(`SKILL.md front matter field ${key} differs from the listing`);
  }
}

/**
 * Loads one skill: SKILL.md first (verified, front matter compared), then its other files, each
 * verified. Resolves with the files' bytes by URI; rejects with SkillRejected on any mismatch.
 */
async function loadSkill(client, entry) {
  const files = Array.isArray(entry.resources) ? entry.resources : [];
  const main = files.find((f) => f.uri === entry.uri);
  if (!main) throw new SkillRejected(`${entry.uri}: the listing gives no digest for SKILL.md`);
  const loaded = new Map();
  const mainBytes = await fetchBytes(client, main.uri);
  verifyFile(main, mainBytes);
  compareFrontMatter(entry.frontmatter, frontMatter(mainBytes.toString("utf8")));
  loaded.set(main.uri, mainBytes);
  for (const file of files) {
    if (file.uri === main.uri) continue;
    const bytes = await fetchBytes(client, file.uri);
    verifyFile(file, bytes);
    loaded.set(file.uri, bytes);
  }
  return loaded;
}

/** Lists the skills and, when `load` is set, loads the first one (the user chose it). */
function host(ctx, { load }) {
  return ctx.session({}, async (client) => {
    if (!client.serverCapabilities.extensions?.[EXTENSION])
      throw new Error("the server does not offer the skills extension");
    const skills = await listSkills(client);
    ctx.log(`skills: ${skills.map((s) => s.frontmatter?.name ?? s.uri).join(", ")}`);
    if (!load) return;
    if (skills.length === 0) throw new Error("the server lists no skill to load");
    try {
      const files = await loadSkill(client, skills[0]);
      ctx.log(`loaded ${skills[0].uri}: ${files.size} verified file(s)`);
    } catch (error) {
      if (!(error instanceof SkillRejected)) throw error;
      ctx.log(`refused to load the skill: ${error.message}`);
    }
  });
}

export const scenarios = {
  // Listing opens the window in which nothing may be retrieved: the user loads no skill here.
  "sep-2640-client-no-prefetch": (ctx) => host(ctx, { load: false }),
  // The user loads the listed skill; its SKILL.md has been tampered with in one way or another.
  "sep-2640-client-verify-*": (ctx) => host(ctx, { load: true }),
};
