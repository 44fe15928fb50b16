/** `tether resources`: the server's resources. */
import type { Command } from "../command.ts";
import { OPERATION } from "../flag-table.ts";
import { listing } from "./listing.ts";

export const command: Command = {
  name: "resources",
  usage: "tether resources <target> [options]",
  summary: `Lists the server's resources.`,
  examples: `
tether resources http://127.0.0.1:3000/mcp
tether resources my-server --json`,
  flags: OPERATION,
  async run(ctx) {
    return listing(ctx, "resources");
  },
};
