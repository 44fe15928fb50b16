/** `tether auth`: OAuth sign-in, sign-out and the stored token's status (auth-command.ts). */
import { configError } from "../../errors/failures.ts";
import { terminalBlock } from "../../errors/terminal-text.ts";
import type { Command } from "../command.ts";
import { CONNECTION } from "../flag-table.ts";

export const command: Command = {
  name: "auth",
  usage: "tether auth login|logout|status <target> [options]",
  summary: `Signs in to a server that requires OAuth and stores the token (owner-only file in the config
folder, TETHER_CONFIG_DIR overrides it); signs out; or shows what is stored (never the token).
login waits for the browser within the discovery budget (300000 ms unless set). Other commands
sign in by themselves on a terminal; in scripts they use stored tokens only.`,
  examples: `
tether auth login https://example.com/mcp
tether auth status https://example.com/mcp --json
tether tools https://example.com/mcp --stored-auth-only
tether tools https://example.com/mcp --grant client_credentials --client-id ci --client-secret-env CI_SECRET`,
  flags: CONNECTION,
  async run(ctx) {
    const { inv, io, json, redactor } = ctx;
    const [sub, authTarget, ...extra] = inv.positionals;
    if (extra.length > 0 || inv.stdio)
      throw configError("invalid_args", "auth takes a subcommand and one target");
    const { runAuth } = await import("../auth-command.ts");
    return await runAuth(
      sub,
      () => ctx.connection(authTarget),
      {
        ...io,
        // The status row carries the authorization server's words (issuer, scopes).
        stdout: (t) =>
          io.stdout(json ? ctx.jsonOut(JSON.parse(t)) : terminalBlock(redactor.redactSecrets(t))),
        stderr: (t) => io.stderr(terminalBlock(t)),
      },
      json,
    );
  },
};
