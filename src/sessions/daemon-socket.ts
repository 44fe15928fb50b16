/** The session process's socket: whether another one already answers, and listening owner-only. */
import { chmodSync, rmSync } from "node:fs";
import { connect as netConnect, type Server } from "node:net";
import { checkSocket, type SessionPlace } from "./folder.ts";

/** Whether a daemon answers on the socket now. A stale socket file (connect refused) is removed. */
export async function liveDaemon(socket: string): Promise<boolean> {
  if (process.platform !== "win32" && !checkSocket(socket)) return false;
  const alive = await new Promise<boolean>((resolve) => {
    const s = netConnect(socket);
    s.once("connect", () => {
      s.destroy();
      resolve(true);
    });
    s.once("error", () => resolve(false));
  });
  if (!alive && process.platform !== "win32") rmSync(socket, { force: true });
  return alive;
}

/** Listens on the socket, owner-only. */
export function listen0(server: Server, place: SessionPlace): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(place.socket, () => {
      server.off("error", reject);
      // The folder already admits only its owner; the socket says so too.
      if (process.platform !== "win32") chmodSync(place.socket, 0o600);
      resolve();
    });
  });
}
