/** `tether prompts`: the server's prompts. */
import type { Command } from "../command.ts";
import { OPERATION } from "../flag-table.ts";
import { listing } from "./listing.ts";

export const command: Command = {
  name: "prompts",
  usage: "tether prompts <target> [options]",
  summary: `Lists the server's prompts.`,
  examples: `
tether prompts http://127.0.0.1:3000/mcp`,
  flags: OPERATION,
  async run(ctx) {
    return listing(ctx, "prompts");
  },
};
