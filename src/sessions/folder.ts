/**
 * Where the session daemon's socket lives, and the checks made before it is trusted. The folder
 * is the access control: only its owner may enter it, so only its owner (and root) can reach the
 * socket inside. Node cannot read a Unix socket peer's credentials (no SO_PEERCRED), so every
 * check is on the folder and the socket file: owner, type and mode, before listening and before
 * connecting, and again by the daemon on every connection it accepts.
 */
import { chmodSync, lstatSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { configError } from "../errors/failures.ts";

/** The socket's file name inside the folder. */
export const SOCKET_NAME = "sessions.sock";

export interface SessionPlace {
  folder: string;
  socket: string;
}

/** The current user's id, where the platform has one. */
export function currentUid(): number | undefined {
  return typeof process.getuid === "function" ? process.getuid() : undefined;
}

/**
 * `$XDG_RUNTIME_DIR/tether` (a per-user folder the system already keeps private), else a folder
 * named for the user's id in the temp folder (`TETHER_SESSION_DIR` overrides both, for tests and
 * unusual setups). On Windows the socket is a named pipe, whose name carries the user's name.
 */
export function sessionPlace(env: NodeJS.ProcessEnv = process.env, uid = currentUid()): SessionPlace {
  const folder =
    env.TETHER_SESSION_DIR ||
    (env.XDG_RUNTIME_DIR ? join(env.XDG_RUNTIME_DIR, "tether") : join(tmpdir(), `tether-${uid ?? "user"}`));
  if (process.platform === "win32") {
    const user = (env.USERNAME ?? "user").replace(/[^A-Za-z0-9_.-]/g, "_");
    return { folder, socket: `\\\\.\\pipe\\tether-sessions-${user}` };
  }
  return { folder, socket: join(folder, SOCKET_NAME) };
}

/** Why a folder or socket is not to be trusted, in our own words (never the path). */
function unsafe(what: string): never {
  throw configError(
    "unsafe_session_folder",
    `the session ${what} is not private to this user; remove it or fix its owner and mode`,
  );
}

/** Creates the folder (0700) when missing, then checks it. */
export function prepareFolder(folder: string, uid = currentUid()): void {
  if (process.platform === "win32") return;
  try {
    mkdirSync(folder, { recursive: true, mode: 0o700 });
  } catch (cause) {
    throw configError("unsafe_session_folder", "the session folder could not be created", cause);
  }
  checkFolder(folder, uid);
}

/**
 * The folder is a real directory (not a link), owned by this user, and closed to everyone else
 * (no group or other bits). A folder we created with a wider mode through a permissive umask is
 * narrowed; one owned by someone else is refused.
 */
export function checkFolder(folder: string, uid = currentUid()): void {
  if (process.platform === "win32") return;
  let st: ReturnType<typeof lstatSync>;
  try {
    st = lstatSync(folder);
  } catch (cause) {
    throw configError("unsafe_session_folder", "the session folder could not be read", cause);
  }
  if (!st.isDirectory() || st.isSymbolicLink()) unsafe("folder");
  if (uid !== undefined && st.uid !== uid) unsafe("folder");
  if ((st.mode & 0o077) !== 0) {
    try {
      chmodSync(folder, 0o700);
    } catch {
      unsafe("folder");
    }
    if ((lstatSync(folder).mode & 0o077) !== 0) unsafe("folder");
  }
}

/**
 * The socket file is a socket owned by this user. Returns false when there is none; a file of
 * another kind or owner is refused (it is not ours to remove).
 */
export function checkSocket(socket: string, uid = currentUid()): boolean {
  if (process.platform === "win32") return true;
  let st: ReturnType<typeof lstatSync>;
  try {
    st = lstatSync(socket);
  } catch {
    return false;
  }
  if (!st.isSocket()) unsafe("socket");
  if (uid !== undefined && st.uid !== uid) unsafe("socket");
  return true;
}
