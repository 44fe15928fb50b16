/** `tether completion`: a shell completion script (completion.ts). */
import type { Command } from "../command.ts";

export const command: Command = {
  name: "completion",
  usage: "tether completion bash|zsh|fish",
  summary: `Prints a completion script for your shell.`,
  examples: `
eval "$(tether completion bash)"
tether completion fish > ~/.config/fish/completions/tether.fish`,
  flags: [],
  quiet: true,
  async run(ctx) {
    ctx.io.stdout((await import("../completion.ts")).completionScript(ctx.inv.positionals[0], ctx.commands));
    return 0;
  },
};
