/** `tether watch`: the server's notifications as they arrive, until Ctrl-C or --duration. */
import { configError } from "../../errors/failures.ts";
import type { Command } from "../command.ts";
import { OPERATION } from "../flag-table.ts";
import { watch } from "../watch.ts";

export const command: Command = {
  name: "watch",
  usage: "tether watch <target> [--log-level L] [--subscribe URI]... [--duration MS] [options]",
  summary: `Prints the server's notifications as they arrive, one line each (with --json, one JSON object
a line): log messages at --log-level and above, list changes, updates of each --subscribe'd
resource, and progress. Ends on Ctrl-C or after --duration MS (exit 0).`,
  examples: `
tether watch my-server --log-level info
tether watch my-server --subscribe demo://doc --json --duration 60000`,
  flags: [...OPERATION, "subscribe", "duration"],
  async run(ctx) {
    const { inv, io } = ctx;
    if (ctx.rest.length > 0) throw configError("invalid_args", "watch takes only a target");
    const duration = inv.values.duration;
    if (
      duration !== undefined &&
      (!/^\d+$/.test(duration) || Number(duration) < 1 || Number(duration) > 86_400_000)
    )
      throw configError("invalid_limit", "--duration must be a whole number of ms from 1 to 86400000");
    // Notifications may arrive on the optional server-to-client stream: it is opened here.
    const options = { ...(await ctx.build()), listen: true };
    await ctx.open(options, (c) =>
      watch(c, {
        logLevel: ctx.logLevel,
        subscribe: inv.values.subscribe ?? [],
        durationMs: duration === undefined ? undefined : Number(duration),
        json: ctx.json,
        signal: io.signal,
        write: io.stdoutNow ?? io.stdout,
        redactor: ctx.redactor,
      }),
    );
    return 0;
  },
};
