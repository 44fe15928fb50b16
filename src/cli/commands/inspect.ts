/** `tether inspect`: the web explorer (inspect-command.ts). */
import type { Command } from "../command.ts";
import { CONNECTION } from "../flag-table.ts";

export const command: Command = {
  name: "inspect",
  usage:
    "tether inspect [<target>|@NAME|NAME...] [--port N] [--host ADDR --allow-remote] [--no-open] [options]",
  summary: `Serves a web page to explore and debug servers: how each connection was made, stage by stage;
tools with forms, resources, templates, prompts, logs and every message. Prints its URL first
(one line, with a secret token made for this launch) and opens it unless --no-open. With no
target the page lists the servers of the config files and the live sessions. Serves on
127.0.0.1 (--port, default a free port); another address needs --host ADDR --allow-remote.
Ctrl-C ends the explorer, its connections and every process it started.`,
  examples: `
tether inspect -- npx -y @modelcontextprotocol/server-everything
tether inspect my-server other-server --no-open
tether inspect`,
  flags: [...CONNECTION, "port", "host", "allow-remote", "no-open"],
  async run(ctx) {
    return await (await import("../inspect-command.ts")).runInspect(ctx);
  },
};
