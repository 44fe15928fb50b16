/** `tether bridge`: the target served to an MCP host (bridge-command.ts). */
import type { Command } from "../command.ts";
import { CONNECTION } from "../flag-table.ts";

export const command: Command = {
  name: "bridge",
  usage: "tether bridge <target> [--listen HOST:PORT [--allow-remote --listen-token-env VAR]] [options]",
  summary: `Serves the target to an MCP host on stdin/stdout (or, with --listen, over Streamable HTTP and
HTTP+SSE at /mcp and /sse), with every budget, ceiling and error rule of the client, translating
between protocol eras. A non-loopback --listen needs --allow-remote and a bearer token from
--listen-token-env; --idle-timeout MS ends an unused HTTP session (default 1800000).`,
  examples: `
tether bridge https://example.com/mcp --call-timeout 120000
tether bridge -- npx -y @modelcontextprotocol/server-everything
tether bridge --listen 127.0.0.1:8808 -- node server.js`,
  flags: [...CONNECTION, "listen", "allow-remote", "listen-token-env", "idle-timeout"],
  async run(ctx) {
    return await (await import("../bridge-command.ts")).runBridge(
      { rest: ctx.rest, values: ctx.inv.values },
      ctx.io,
      ctx.build,
      ctx.redactor,
    );
  },
};
