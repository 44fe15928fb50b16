/**
 * The requests a page may send again from the message history: those that only ask, and a tool
 * call. Shared by the explorer's API (which refuses any other) and the page (which offers
 * Replay on these), so the two cannot drift apart.
 */
export const REPLAYABLE: ReadonlySet<string> = new Set([
  "tools/call",
  "tools/list",
  "resources/list",
  "resources/templates/list",
  "resources/read",
  "prompts/list",
  "prompts/get",
  "completion/complete",
  "ping",
]);
