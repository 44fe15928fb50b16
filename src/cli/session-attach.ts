/**
 * The `@NAME` target: a command's client is its link to the session process, attached to the
 * session. Apart from the session commands so that a command on `@NAME` loads only this, the link
 * and the wire, not the daemon or the connect path.
 */
import type { Client } from "../client/api.ts";
import type { ConnectOptions } from "../options/options.ts";
import { sessionPlace } from "../sessions/folder.ts";
import { SessionLink } from "../sessions/link.ts";
import { attach, type RemoteClient } from "../sessions/remote-client.ts";
import { sessionName } from "./session-target.ts";

/**
 * A client for `@NAME`: the command's link to the daemon, attached to the session. Requests run
 * under the command's budgets (its flags) or, where it names none, the session's.
 */
export async function attachSession(
  target: string,
  options: ConnectOptions,
  env: NodeJS.ProcessEnv,
): Promise<Client> {
  const name = sessionName(target);
  const link = await SessionLink.forSession(sessionPlace(env), name, options.signal);
  const client: RemoteClient = await attach(link, name, {
    callTimeoutMs: options.call?.timeoutMs ?? options.timeoutMs,
    callMaxBytes: options.call?.maxResponseBytes ?? options.maxResponseBytes,
    discoveryTimeoutMs: options.discovery?.timeoutMs ?? options.timeoutMs,
    discoveryMaxBytes: options.discovery?.maxResponseBytes ?? options.maxResponseBytes,
  });
  if (options.prefetchTools) {
    try {
      await client.listTools({ signal: options.signal });
    } catch (error) {
      await client.close();
      throw error;
    }
  }
  return client;
}
