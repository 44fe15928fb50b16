/**
 * How long each step of a stdio server's shutdown may take. Kept apart from the process code so
 * that what only needs the figures (the CLI's exit timer, a session command's wait) does not load
 * process spawning to learn them.
 */

/**
 * After a stdio server that is still establishing closes its output or exits, how long it gets to
 * finish exiting and for its last stderr bytes to arrive, so the error can say why it stopped.
 */
export const LAST_WORDS_MS = 250;
/** After stdin closes, how long a server gets to exit by itself before SIGTERM. */
export const STDIN_CLOSE_GRACE_MS = 500;
/** After SIGTERM to its process group, how long a server and its helpers get before SIGKILL. */
export const SIGTERM_GRACE_MS = 1000;
/** After SIGKILL, how long the kernel gets to take the tree down before close() stops waiting. */
export const KILL_REAP_MS = 250;
/**
 * The most any shutdown of ours can take beyond the deadline that triggered it: the two graces
 * above, plus a little for the kernel to reap the killed processes.
 */
export const CLEANUP_GRACE_MS = STDIN_CLOSE_GRACE_MS + SIGTERM_GRACE_MS + KILL_REAP_MS;
