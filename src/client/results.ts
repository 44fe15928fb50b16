/**
 * The shapes of what servers return, as the client hands them on. They are type aliases rather
 * than interfaces on purpose: an alias of JSON-valued fields stays assignable to `JsonObject`, so
 * a result can go straight into code that takes any JSON document (a renderer, a redactor, a
 * logger). Fields the spec marks optional are optional here; the client checks only what it
 * relies on (see shapes.ts), so anything else a server sends passes through as it came.
 */
import type { JsonObject, JsonValue } from "../jsonrpc/messages.ts";

/** Who a piece of content is meant for. */
export type Role = "user" | "assistant";

/** Hints about how content is to be used or shown. */
export type Annotations = {
  audience?: Role[];
  /** 0 (least important) to 1 (most important). */
  priority?: number;
  /** ISO 8601 timestamp. */
  lastModified?: string;
};

/** An icon a server offers for a tool, resource, prompt or itself. */
export type Icon = {
  src: string;
  mimeType?: string;
  sizes?: string[];
  theme?: "light" | "dark";
};

/** A resource's contents as text. */
export type TextResourceContents = {
  uri: string;
  mimeType?: string;
  text: string;
  _meta?: JsonObject;
};

/** A resource's contents as base64 bytes. */
export type BlobResourceContents = {
  uri: string;
  mimeType?: string;
  /** Base64. */
  blob: string;
  _meta?: JsonObject;
};

/** A resource's contents: text or base64 bytes. */
export type ResourceContents = TextResourceContents | BlobResourceContents;

/** Text, as the server sent it (sanitize it before a terminal shows it). */
export type TextContent = { type: "text"; text: string; annotations?: Annotations; _meta?: JsonObject };

/** An image, base64-encoded. */
export type ImageContent = {
  type: "image";
  /** Base64. */
  data: string;
  mimeType: string;
  annotations?: Annotations;
  _meta?: JsonObject;
};

/** Audio, base64-encoded. */
export type AudioContent = {
  type: "audio";
  /** Base64. */
  data: string;
  mimeType: string;
  annotations?: Annotations;
  _meta?: JsonObject;
};

/** A pointer to a resource the client may read (it need not appear in `resources/list`): a Resource, typed. */
export type ResourceLink = { type: "resource_link" } & Resource;

/** A resource's contents carried inline. */
export type EmbeddedResource = {
  type: "resource";
  resource: ResourceContents;
  annotations?: Annotations;
  _meta?: JsonObject;
};

/**
 * One block of a tool result or prompt message. Servers of later versions may send types not
 * listed here; the client passes them on unchanged, so code that switches on `type` keeps a
 * default branch.
 */
export type ContentBlock = TextContent | ImageContent | AudioContent | ResourceLink | EmbeddedResource;

/** What a tool says about its behaviour. Hints only: a server may say anything here. */
export type ToolAnnotations = {
  title?: string;
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
};

/** A tool as listed by `tools/list`. */
export type Tool = {
  name: string;
  title?: string;
  description?: string;
  /** JSON Schema of the arguments. */
  inputSchema: JsonObject;
  /** JSON Schema that the result's `structuredContent` must match; the client checks it. */
  outputSchema?: JsonObject;
  annotations?: ToolAnnotations;
  /** Whether the tool may (`optional`), must (`required`) or must not (`forbidden`) run as a task. */
  execution?: { taskSupport?: "forbidden" | "optional" | "required" };
  icons?: Icon[];
  _meta?: JsonObject;
};

/** What `tools/call` returns. `isError: true` is the tool's own failure, reported as a result. */
export type CallToolResult = {
  content: ContentBlock[];
  /** Matches the tool's `outputSchema` when it has one (checked, unless the tool failed). */
  structuredContent?: JsonValue;
  isError?: boolean;
  _meta?: JsonObject;
};

/** A resource as listed by `resources/list`. */
export type Resource = {
  uri: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  /** Size in bytes, if the server knows it. */
  size?: number;
  annotations?: Annotations;
  icons?: Icon[];
  _meta?: JsonObject;
};

/** A family of resources named by an RFC 6570 URI template. */
export type ResourceTemplate = {
  uriTemplate: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  annotations?: Annotations;
  icons?: Icon[];
  _meta?: JsonObject;
};

/** What `resources/read` returns. */
export type ReadResourceResult = { contents: ResourceContents[]; _meta?: JsonObject };

/** An argument a prompt takes. */
export type PromptArgument = { name: string; title?: string; description?: string; required?: boolean };

/** A prompt as listed by `prompts/list`. */
export type Prompt = {
  name: string;
  title?: string;
  description?: string;
  arguments?: PromptArgument[];
  icons?: Icon[];
  _meta?: JsonObject;
};

/** One message of a prompt: who says it, and one content block. */
export type PromptMessage = { role: Role; content: ContentBlock };

/** What `prompts/get` returns. */
export type GetPromptResult = { description?: string; messages: PromptMessage[]; _meta?: JsonObject };

/** What `complete` completes: a prompt's argument, or a resource template's variable. */
export type CompletionRef = { type: "ref/prompt"; name: string } | { type: "ref/resource"; uri: string };

/** What `completion/complete` returns. */
export type CompleteResult = {
  completion: {
    /** At most 100 suggestions. */
    values: string[];
    /** How many suggestions there are in all, if the server knows. */
    total?: number;
    /** Whether there are more than those returned. */
    hasMore?: boolean;
  };
  _meta?: JsonObject;
};

/** Severity of a log message, RFC 5424 order, least severe first. */
export type LoggingLevel =
  | "debug"
  | "info"
  | "notice"
  | "warning"
  | "error"
  | "critical"
  | "alert"
  | "emergency";

/** Every logging level, least severe first. */
export const LOGGING_LEVELS: readonly LoggingLevel[] = [
  "debug",
  "info",
  "notice",
  "warning",
  "error",
  "critical",
  "alert",
  "emergency",
];

/** A `notifications/message` from the server. `data` is the server's, as sent: any JSON. */
export type LoggingMessage = { level: LoggingLevel; logger?: string; data: JsonValue };

/** A `notifications/resources/updated`: a subscribed resource changed. */
export type ResourceUpdate = { uri: string };

/** Where a task is: `completed`, `failed` and `cancelled` are final. */
export type TaskStatus = "working" | "input_required" | "completed" | "failed" | "cancelled";

/**
 * A task: a request the server runs on its own time, polled by id. The same shape in every era
 * (2025-11-25's `ttl` and `pollInterval`, 2026-07-28's `ttlMs` and `pollIntervalMs`, both in ms).
 */
export type Task = {
  taskId: string;
  status: TaskStatus;
  statusMessage?: string;
  /** ISO 8601. */
  createdAt?: string;
  /** ISO 8601. */
  lastUpdatedAt?: string;
  /** How long the server keeps the task after its creation, in ms; `null`: no limit. */
  ttlMs?: number | null;
  /** How often the server asks to be polled, in ms. */
  pollIntervalMs?: number;
};

/** What a task-augmented call returns when the server made a task of it. */
export type CreateTaskResult = { task: Task; _meta?: JsonObject };

/** One page of a listing, and the cursor of the next one (absent on the last page). */
export type Page<T> = { items: T[]; nextCursor?: string };

/** A notification from the server, as received. */
export type ServerNotification = { method: string; params: JsonObject };

/** One file of a skill as its entry lists it. */
export interface SkillFile {
  uri: string;
  /** `sha256:` and 64 lowercase hexadecimal digits: the SHA-256 of the file's bytes. */
  digest: string;
  /** The file's length in bytes. */
  size: number;
}

/** A skill as the server lists it (`skills/list`, `skills/get`). Nothing of it is verified yet. */
export interface Skill {
  /** The URI of its `SKILL.md`. */
  uri: string;
  /** `frontmatter.name`. */
  name: string;
  /** `frontmatter.description`. */
  description: string;
  /** The front matter of its `SKILL.md`, as the server rendered it in JSON. */
  frontmatter: JsonObject;
  /** Its files, or `"dynamic"` when the server generates them (such a skill cannot be verified). */
  resources: SkillFile[] | "dynamic";
}

/** One verified file of a loaded skill. */
export interface LoadedSkillFile {
  /** Its path inside the skill's folder, `/`-separated (`SKILL.md`, `references/GUIDE.md`). */
  path: string;
  uri: string;
  bytes: Uint8Array;
  mimeType?: string;
}

/** A skill whose every file matched its entry. */
export interface LoadedSkill {
  /** The entry it was verified against. */
  skill: Skill;
  /** `SKILL.md` first, then the other files in the entry's order. */
  files: LoadedSkillFile[];
  /** `SKILL.md` as text. */
  markdown: string;
}
