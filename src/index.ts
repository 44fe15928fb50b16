export { clientKey, configDir, FileTokenStore, MemoryTokenStore, serverKey } from "./auth/token-store.ts";
export type {
  ArgumentValue,
  CallOptions,
  Client,
  CompletionArgument,
  CompletionContext,
  ListKind,
  LoadSkillOptions,
  OperationOptions,
  Progress,
  TaskCallOptions,
  TaskRequest,
  TaskRunOptions,
  ToolArguments,
} from "./client/api.ts";
export type { NotificationHandler } from "./client/notification-hub.ts";
export type {
  Annotations,
  AudioContent,
  BlobResourceContents,
  CallToolResult,
  CompleteResult,
  CompletionRef,
  ContentBlock,
  CreateTaskResult,
  EmbeddedResource,
  GetPromptResult,
  Icon,
  ImageContent,
  LoadedSkill,
  LoadedSkillFile,
  LoggingLevel,
  LoggingMessage,
  Page,
  Prompt,
  PromptArgument,
  PromptMessage,
  ReadResourceResult,
  Resource,
  ResourceContents,
  ResourceLink,
  ResourceTemplate,
  ResourceUpdate,
  Role,
  ServerNotification,
  Skill,
  SkillFile,
  Task,
  TaskStatus,
  TextContent,
  TextResourceContents,
  Tool,
  ToolAnnotations,
} from "./client/results.ts";
export { LOGGING_LEVELS } from "./client/results.ts";
export { SKILL_LIMITS } from "./client/skills.ts";
export type { ToolShapes, TypedCallArgs, TypedCallResult, TypedTools } from "./client/typed-tools.ts";
export { typedTools } from "./client/typed-tools.ts";
export { connect } from "./connect/connect.ts";
export type {
  CallEffect,
  CancellationSource,
  ClosureCategory,
  Era,
  ErrorCode,
  Phase,
  Stage,
  TransportMode,
} from "./errors/codes.ts";
export type { ErrorRecord, Limits } from "./errors/tether-error.ts";
export { TetherError } from "./errors/tether-error.ts";
export type { UrlElicitationRequired } from "./errors/url-elicitation.ts";
export type { JsonObject, JsonValue } from "./jsonrpc/messages.ts";
export type { LifecycleEvent } from "./lifecycle/events.ts";
export { DIAGNOSTICS_CHANNEL } from "./lifecycle/events.ts";
export type { Deps } from "./options/deps.ts";
export type { ClientHandlers, HandlerContext } from "./options/handlers.ts";
export { LIMITS } from "./options/limits.ts";
export type {
  AuthOptions,
  ConnectOptions,
  ConnectSettings,
  HttpTarget,
  MeterProviderLike,
  PhaseBudget,
  StdioTarget,
  TracerProviderLike,
  TracingOptions,
} from "./options/options.ts";
export type { OutputValidator, OutputVerdict } from "./options/output-validator.ts";
export type { AttemptFailure, RecoveryPolicy, TransientRetryPolicy } from "./options/recovery-policy.ts";
export type {
  AuthRecord,
  ClientAuthMethod,
  RegisteredClient,
  ServerTokens,
  TokenStore,
} from "./options/token-store.ts";
export type { EraHint, EraHintStore } from "./protocol/era-hints.ts";
export { MemoryEraHints } from "./protocol/era-hints.ts";
export type { Extensions } from "./protocol/extensions.ts";
export {
  isExtensionId,
  SKILLS_EXTENSION,
  TASKS_EXTENSION,
  UI_EXTENSION,
  UI_MIME_TYPE,
} from "./protocol/extensions.ts";
export type { ProtocolVersion } from "./protocol/versions.ts";
export { KNOWN_VERSIONS } from "./protocol/versions.ts";
export { CLEANUP_GRACE_MS, SIGTERM_GRACE_MS, STDIN_CLOSE_GRACE_MS } from "./transport/grace.ts";
