/** `tether servers`: the servers found in config files, secrets redacted. */
import type { Command } from "../command.ts";
import { configEnvironment, listServers } from "../config.ts";
import { renderServers } from "../config-listing.ts";

export const command: Command = {
  name: "servers",
  usage: "tether servers [--config FILE] [--json]",
  summary: `Lists the servers found in config files (./.mcp.json, ./.vscode/mcp.json, ./.cursor/mcp.json,
~/.claude.json (with this folder's project servers), the user's Cursor, VS Code, Windsurf and
Claude Desktop configs, ~/.codex/config.toml), with every secret redacted.`,
  examples: `
tether servers
tether servers --config ./.mcp.json --json`,
  flags: ["config", "json"],
  async run(ctx) {
    const { io } = ctx;
    io.stdout(
      renderServers(listServers(ctx.inv.values.config, configEnvironment(io.env)), ctx.json, ctx.style),
    );
    return 0;
  },
};
