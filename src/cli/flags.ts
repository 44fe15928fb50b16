/**
 * Which options each command takes: the one table that option checking, the help text and the
 * completion scripts read, so a flag is never accepted and then silently ignored.
 */

/** Options every command accepts. */
const EVERYWHERE = ["help", "version", "debug"] as const;

/** How to sign in with OAuth: none of them may be combined with `--no-oauth` or an Authorization header. */
export const OAUTH_FLAGS = [
  "stored-auth-only",
  "client-id",
  "client-secret-env",
  "client-key-file",
  "grant",
  "scope",
  "assertion-file",
  "assertion-env",
  "idp-token-endpoint",
  "idp-client-id",
  "idp-client-secret-env",
  "dpop",
  "application-type",
] as const;

/** How to reach a server and what to spend on it: every command that connects takes these. */
const CONNECTION = [
  "transport",
  "header",
  "env",
  "bearer-env",
  "protocol-version",
  "max-protocol-version",
  "timeout",
  "discovery-timeout",
  "connect-timeout",
  "call-timeout",
  "probe-timeout",
  "handshake-timeout",
  "max-bytes",
  "discovery-max-bytes",
  "call-max-bytes",
  "max-frame-bytes",
  "retry",
  "json",
  "events",
  "server-stderr",
  "config",
  "fresh",
  "no-oauth",
  ...OAUTH_FLAGS,
] as const;

/** Commands that hold a session open for an operation, and so can hear the server's log messages. */
const OPERATION = [...CONNECTION, "log-level"] as const;

/** The options a command takes beyond EVERYWHERE. */
export const COMMAND_FLAGS: Record<string, readonly string[]> = {
  tools: OPERATION,
  call: [...OPERATION, "args-file", "output", "task", "progress-timeout"],
  probe: CONNECTION,
  resources: OPERATION,
  read: [...OPERATION, "output"],
  prompts: OPERATION,
  prompt: [...OPERATION, "args-file"],
  templates: OPERATION,
  complete: OPERATION,
  watch: [...OPERATION, "subscribe", "duration"],
  types: [...OPERATION, "output"],
  session: [...CONNECTION, "idle-timeout"],
  shell: OPERATION,
  servers: ["config", "json"],
  auth: CONNECTION,
  bridge: [...CONNECTION, "listen", "allow-remote", "listen-token-env", "idle-timeout"],
  completion: [],
};

/** Options a command takes that not every connecting command does, for its help. */
export function extraFlags(command: string): string[] {
  const own = COMMAND_FLAGS[command] ?? [];
  return own.filter((f) => !(CONNECTION as readonly string[]).includes(f));
}

/** Every option name, for the completion scripts. */
export function allFlags(): string[] {
  return [...new Set([...CONNECTION, ...Object.values(COMMAND_FLAGS).flat(), ...EVERYWHERE])];
}

/** The commands that take `flag`. */
export function commandsTaking(flag: string): string[] {
  return Object.entries(COMMAND_FLAGS)
    .filter(([, flags]) => flags.includes(flag))
    .map(([c]) => c);
}

/** Whether `command` takes `flag`. */
export function takes(command: string, flag: string): boolean {
  return (EVERYWHERE as readonly string[]).includes(flag) || (COMMAND_FLAGS[command] ?? []).includes(flag);
}
