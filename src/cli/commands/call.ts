/** `tether call`: one tool, called once, its arguments fitted to the tool's input schema first. */

import { configError, interruptError } from "../../errors/failures.ts";
import { interruptOf } from "../../errors/interrupt.ts";
import { terminalLine } from "../../errors/terminal-text.ts";
import { TetherError } from "../../errors/tether-error.ts";
import type { JsonValue } from "../../jsonrpc/messages.ts";
import { parseToolArgs } from "../args.ts";
import { type Command, callBudgetMs, stdinArgs, writeOutput } from "../command.ts";
import { numberFlag } from "../connect-options.ts";
import { completeRequiredUrls } from "../elicit.ts";
import { EXIT_TOOL_ERROR } from "../exit-codes.ts";
import { OPERATION } from "../flag-table.ts";
import { progressStatus } from "../progress-event.ts";
import { renderCall } from "../render.ts";
import { fitCall } from "../schema-args.ts";
import { schemaHintFor } from "../schema-hint.ts";
import { StatusLine } from "../status-line.ts";

export const command: Command = {
  name: "call",
  usage: "tether call <target> <tool> [ARGS] [options]",
  summary: `Calls one tool, once (never re-sent). Prints its text content, or with --json the whole result.
A result with isError: true prints the same way and exits 1. The arguments are checked against
the tool's input schema first (one tools/list). -o FILE writes its image, audio or blob content
decoded (- for stdout).`,
  examples: `
tether call http://127.0.0.1:3000/mcp echo message=hi
tether call my-server get-sum a=2 b=3 --json
tether call my-server get-tiny-image -o tiny.png
echo '{"a":2,"b":3}' | tether call my-server get-sum --args-file -
tether call https://example.com/mcp search '{"query":"mcp"}' --call-timeout 60000
tether call echo message=hi -- npx -y @modelcontextprotocol/server-everything`,
  flags: [...OPERATION, "args-file", "output", "task", "progress-timeout"],
  async run(ctx) {
    const { inv, io, json, redactor } = ctx;
    const [tool, ...words] = ctx.rest;
    if (!tool) throw configError("invalid_args", "call needs a tool name");
    // After an argument error or a tool error, a person is pointed at the tool's schema.
    const schemaHint = schemaHintFor(ctx.commandFor("tool", [tool]));
    ctx.argumentHint = schemaHint;

    const given = parseToolArgs(words, inv.values["args-file"], await stdinArgs(inv, io));
    const progressTimeout = numberFlag(inv.values, "progress-timeout", "timeoutMs");
    const callTimeout = numberFlag(inv.values, "call-timeout", "timeoutMs");
    const options = await ctx.build();
    // Progress and a task's status rewrite one line on a terminal's stderr, erased before the result.
    const status = io.stderrIsTty && !json && !inv.values.events ? new StatusLine(io.stderr) : undefined;
    const result = await ctx.open(options, async (c) => {
      // One listing gives the schema; nothing is sent to the tool until the arguments fit it.
      // A server that cannot list its tools (a JSON-RPC error) leaves the schema unknown: the
      // arguments then go as written.
      const listed = await c.listTools({ signal: io.signal }).catch((error: unknown) => {
        if (error instanceof TetherError && error.code === "remote_error") return undefined;
        throw error;
      });
      const args = fitCall(tool, listed, given);
      const once = async () => {
        if (inv.values.task)
          return await c.callToolAsTask(tool, args, {
            signal: io.signal,
            onStatus: (t) => status?.show(`task ${t.status}${t.statusMessage ? `: ${t.statusMessage}` : ""}`),
          });
        return await c.callTool(tool, args, {
          signal: io.signal,
          onProgress: (p) => {
            status?.show(progressStatus(p));
            ctx.progress?.(p);
          },
          // Each notification restarts the clock; --call-timeout still bounds the whole call.
          ...(progressTimeout !== undefined
            ? { resetTimeoutOnProgress: true, timeoutMs: progressTimeout, maxTotalTimeoutMs: callTimeout }
            : {}),
        });
      };
      try {
        return await once();
      } catch (error) {
        // A server that needs URLs opened first (-32042): at a terminal the person is shown them
        // and asked; once every one is reported complete, the call is sent again, once, because
        // the person agreed. Tether never re-sends a call on its own.
        const required = error instanceof TetherError ? error.urlElicitations : undefined;
        if (!required) throw error;
        status?.clear();
        const budget = callBudgetMs(options);
        const consented = await completeRequiredUrls(
          options.handlers?.elicitation,
          required,
          budget,
          io.signal,
        ).catch((e: unknown) => {
          if (io.signal?.aborted) return false;
          throw e;
        });
        // Ctrl-C while asked or waiting: the command was cancelled, not refused.
        const stop = interruptOf(io.signal);
        if (stop) throw interruptError(stop, { stage: "call", phase: "call", redactor, effect: "none" });
        if (!consented) throw error;
        io.stderr("Calling the tool again, once, now that the server reports the step complete.\n");
        return await once();
      } finally {
        status?.clear();
      }
    });
    if (inv.values.output !== undefined) writeOutput(inv.values.output, callBytes(result), io);
    else io.stdout(json ? ctx.jsonOut(result) : renderCall(redactor.redactDocument(result)));
    if (result.isError !== true) return 0;
    if (io.stderrIsTty && !json) {
      // After the result, which goes out first.
      io.flush?.();
      io.stderr(`${terminalLine(`hint: ${schemaHint}`)}\n`);
    }
    return EXIT_TOOL_ERROR;
  },
};

/**
 * A call's binary content as bytes: its image, audio and embedded blob blocks decoded from
 * base64, one after another (usually there is one); a result without any is its text as UTF-8.
 */
function callBytes(result: { content: JsonValue[] }): Uint8Array {
  const binary: Buffer[] = [];
  const text: string[] = [];
  for (const block of result.content) {
    if (typeof block !== "object" || block === null || Array.isArray(block)) continue;
    if ((block.type === "image" || block.type === "audio") && typeof block.data === "string")
      binary.push(Buffer.from(block.data, "base64"));
    else if (
      typeof block.resource === "object" &&
      block.resource !== null &&
      !Array.isArray(block.resource)
    ) {
      const r = block.resource;
      if (typeof r.blob === "string") binary.push(Buffer.from(r.blob, "base64"));
      else if (typeof r.text === "string") text.push(r.text);
    } else if (block.type === "text" && typeof block.text === "string") text.push(block.text);
  }
  return binary.length > 0 ? Buffer.concat(binary) : Buffer.from(text.join("\n"), "utf8");
}
