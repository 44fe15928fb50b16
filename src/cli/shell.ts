/**
 * `tether shell <target|@NAME>`: an interactive prompt on one connection. Each line is one
 * command (tools, tool, call, read, prompt, prompts, resources, templates, complete, watch), run on the
 * same client, printed as the one-shot commands print it; a failure prints its error line and the
 * prompt comes back. Server notifications print between prompts. History lives in the user's
 * state folder; Tab completes commands, tool names and argument names from the tool's schema.
 */
import { appendFileSync, chmodSync, mkdirSync, readFileSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { createInterface, type Interface } from "node:readline";
import type { Client } from "../client/api.ts";
import { type CompletionRef, LOGGING_LEVELS, type LoggingLevel, type Tool } from "../client/results.ts";
import { configError } from "../errors/failures.ts";
import type { Redactor } from "../errors/redact.ts";
import { terminalJson, terminalLine } from "../errors/terminal-text.ts";
import { asTetherError, TetherError } from "../errors/tether-error.ts";
import type { JsonObject } from "../jsonrpc/messages.ts";
import { parseToolArgs } from "./args.ts";
import { errorLines } from "./error-line.ts";
import type { Io } from "./io.ts";
import {
  exampleArgs,
  renderCall,
  renderCompletion,
  renderList,
  renderTemplates,
  renderText,
  renderTool,
  renderTools,
  type Style,
} from "./render.ts";
import { checkPromptArguments, findTool, fitArguments } from "./schema-args.ts";
import { shellWord } from "./schema-hint.ts";
import { watch } from "./watch.ts";

/** The shell's commands, for help and completion. */
export const SHELL_COMMANDS = [
  "tools",
  "tool",
  "call",
  "read",
  "prompt",
  "prompts",
  "resources",
  "templates",
  "complete",
  "watch",
  "help",
  "exit",
] as const;

const SHELL_HELP = `commands:
  tools                         list the tools
  tool NAME                     one tool in full: schemas, annotations, an example call
  call NAME [k=v k:=json ...]   call one tool (arguments checked against its schema)
  read URI                      read one resource
  prompt NAME [k=v ...]         get one prompt (arguments checked against its declared ones)
  prompts, resources            list them
  templates                     list resource templates
  complete REF ARG=PARTIAL      completion values (REF: prompt:NAME or resource:URI-TEMPLATE)
  watch [LEVEL]                 print notifications until Ctrl-C
  help, exit                    this text; leave (Ctrl-D too)
`;

/** The most history lines kept, and the most bytes of the file read back. */
const HISTORY_LINES = 500;
const HISTORY_READ_BYTES = 256 * 1024;

export interface ShellOptions {
  io: Io;
  redactor: Redactor;
  style: Style;
  json: boolean;
  /** Input and output streams; the process's own by default. */
  input?: NodeJS.ReadableStream;
  output?: NodeJS.WritableStream;
}

/** The user's state folder for tether (TETHER_STATE_DIR overrides it). */
export function stateDir(env: NodeJS.ProcessEnv): string {
  if (env.TETHER_STATE_DIR) return env.TETHER_STATE_DIR;
  return join(env.XDG_STATE_HOME || join(homedir(), ".local", "state"), "tether");
}

/** Words of a line: whitespace apart, with '...' and "..." keeping spaces. */
export function words(line: string): string[] {
  const out: string[] = [];
  const re = /"((?:[^"\\]|\\.)*)"|'([^']*)'|([^\s"']+)/g;
  let current = "";
  let lastEnd = -1;
  for (const m of line.matchAll(re)) {
    const piece = m[1] !== undefined ? m[1].replace(/\\(.)/g, "$1") : (m[2] ?? m[3] ?? "");
    if (m.index === lastEnd) current += piece;
    else {
      if (lastEnd !== -1) out.push(current);
      current = piece;
    }
    lastEnd = m.index + m[0].length;
  }
  if (lastEnd !== -1) out.push(current);
  return out;
}

/**
 * Tab completion: the shell's commands first; after `call` or `tool`, tool names; after `call NAME`, the
 * names of its arguments not given yet (from its input schema), as `name=`; after `watch`, levels.
 */
export function completeLine(line: string, tools: readonly Tool[]): [string[], string] {
  const w = words(line);
  const trailing = line.length === 0 || /\s$/.test(line);
  const partial = trailing ? "" : (w.at(-1) ?? "");
  const done = trailing ? w : w.slice(0, -1);
  const pick = (options: readonly string[]): [string[], string] => [
    options.filter((c) => c.startsWith(partial)),
    partial,
  ];
  if (done.length === 0) return pick(SHELL_COMMANDS);
  if ((done[0] === "call" || done[0] === "tool") && done.length === 1) return pick(tools.map((t) => t.name));
  if (done[0] === "call") {
    const props = tools.find((t) => t.name === done[1])?.inputSchema?.properties;
    const names = props && typeof props === "object" ? Object.keys(props) : [];
    const used = new Set(done.slice(2).map((x) => x.replace(/:?=.*$/s, "")));
    return pick(names.filter((n) => !used.has(n)).map((n) => `${n}=`));
  }
  if (done[0] === "watch" && done.length === 1) return pick(LOGGING_LEVELS);
  return [[], partial];
}

function readHistory(file: string): string[] {
  try {
    if (statSync(file).size > HISTORY_READ_BYTES * 4) return [];
    const text = readFileSync(file, "utf8").slice(-HISTORY_READ_BYTES);
    // readline wants the newest first.
    return text.split("\n").filter(Boolean).slice(-HISTORY_LINES).reverse();
  } catch {
    return [];
  }
}

function remember(file: string, line: string): void {
  try {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    appendFileSync(file, `${line.replace(/[\r\n]/g, " ")}\n`, { mode: 0o600 });
    chmodSync(file, 0o600);
  } catch {
    // History is a convenience: a read-only home does not stop the shell.
  }
}

/** Runs the prompt until exit, end of input or the command's signal; returns the exit status. */
export async function runShell(client: Client, o: ShellOptions): Promise<number> {
  const { io, redactor, style, json } = o;
  const input = o.input ?? process.stdin;
  const output = o.output ?? process.stdout;
  const terminal =
    (input as { isTTY?: boolean }).isTTY === true && (output as { isTTY?: boolean }).isTTY === true;
  const historyFile = join(stateDir(io.env), "shell_history");
  let tools: Tool[] | undefined = client.cachedTools;
  let running: AbortController | undefined;
  let atPrompt = false;

  const write = (text: string) => {
    if (atPrompt && terminal) {
      // A notification between prompts: it goes above the prompt, which is drawn again.
      output.write("\r\x1b[K");
      output.write(text);
      rl.prompt(true);
    } else output.write(text);
  };
  const doc = (value: unknown) => `${terminalJson(redactor.redactDocument(value))}\n`;

  const completer = (line: string): [string[], string] =>
    completeLine(line, tools ?? client.cachedTools ?? []);

  const rl: Interface = createInterface({
    input,
    output,
    terminal,
    prompt: "tether> ",
    completer,
    history: terminal ? readHistory(historyFile) : [],
    historySize: HISTORY_LINES,
  });
  // Ctrl-C at a terminal cancels the command running (its request is cancelled on the server),
  // or clears the line; on an empty prompt it leaves.
  rl.on("SIGINT", () => {
    if (running) running.abort(new Error("SIGINT"));
    else if (rl.line.length > 0) {
      output.write("\n");
      rl.prompt();
    } else rl.close();
  });
  const offCommand = () => running?.abort(io.signal?.reason);
  io.signal?.addEventListener("abort", offCommand, { once: true });

  const off = client.onNotification("*", (n) => {
    // Progress belongs to the call that asked; log messages and the rest print as they come.
    if (n.method === "notifications/progress") return;
    if (json) write(doc({ type: "notification", method: n.method, params: n.params }));
    else if (n.method === "notifications/message") {
      const p = n.params as { level?: string; logger?: string; data?: unknown };
      const text = typeof p.data === "string" ? p.data : JSON.stringify(p.data);
      write(
        `${terminalLine(redactor.messageText(`log ${p.level ?? ""}${p.logger ? ` [${p.logger}]` : ""}: ${text}`))}\n`,
      );
    } else write(`${terminalLine(redactor.messageText(`notification ${n.method}`))}\n`);
  });

  const listTools = async (signal: AbortSignal) => {
    tools = client.cachedTools ?? (await client.listTools({ signal }));
    return tools;
  };

  const run = async (w: string[], signal: AbortSignal): Promise<void> => {
    const [command, ...rest] = w;
    const print = (value: unknown, human: string) => output.write(json ? doc(value) : human);
    switch (command) {
      case "help":
        output.write(SHELL_HELP);
        return;
      case "tools": {
        const list = await listTools(signal);
        print({ tools: list }, renderTools(redactor.redactDocument(list), style));
        return;
      }
      case "tool": {
        if (rest.length !== 1) throw configError("invalid_args", "tool needs exactly one tool name");
        const tool = redactor.redactDocument(findTool(rest[0]!, await listTools(signal)));
        // The example is the shell's own line for calling it, in `tether tool`'s rendering.
        const example = ["call", tool.name, ...exampleArgs(tool)].map(shellWord).join(" ");
        print(tool, renderTool(tool, example, style));
        return;
      }
      case "call": {
        const [name, ...args] = rest;
        if (!name) throw configError("invalid_args", "call needs a tool name");
        const given = parseToolArgs(args, undefined);
        const fitted = fitArguments(findTool(name, await listTools(signal)), given);
        const result = await client.callTool(name, fitted, { signal });
        print(result, renderCall(redactor.redactDocument(result)));
        return;
      }
      case "read": {
        if (rest.length !== 1) throw configError("invalid_args", "read needs exactly one resource URI");
        const result = await client.readResource(rest[0]!, { signal });
        print(result, renderText(redactor.redactDocument(result) as JsonObject));
        return;
      }
      case "prompt": {
        const [name, ...args] = rest;
        if (!name) throw configError("invalid_args", "prompt needs a prompt name");
        const strings: Record<string, string> = {};
        for (const [k, v] of Object.entries(parseToolArgs(args, undefined).args))
          strings[k] = typeof v === "string" ? v : JSON.stringify(v);
        // As the one-shot `prompt`: checked against the declared arguments before prompts/get; a
        // server that cannot list its prompts, or a prompt it does not list, goes as written.
        const listed = await client.listPrompts({ signal }).catch((error: unknown) => {
          if (error instanceof TetherError && error.code === "remote_error") return undefined;
          throw error;
        });
        const declared = listed?.find((p) => p.name === name);
        if (declared) checkPromptArguments(declared, strings);
        const result = await client.getPrompt(name, strings, { signal });
        print(result, renderText(redactor.redactDocument(result) as JsonObject));
        return;
      }
      case "prompts":
      case "resources": {
        const items = (
          command === "prompts"
            ? await client.listPrompts({ signal })
            : await client.listResources({ signal })
        ) as JsonObject[];
        print(
          { [command]: items },
          renderList(redactor.redactDocument(items), command === "resources" ? "uri" : "name", style),
        );
        return;
      }
      case "templates": {
        const items = await client.listResourceTemplates({ signal });
        print(
          { resourceTemplates: items },
          renderTemplates(redactor.redactDocument(items) as JsonObject[], style),
        );
        return;
      }
      case "complete": {
        const [refWord, argWord] = rest;
        const ref = /^(prompt|resource):(.+)$/s.exec(refWord ?? "");
        const pair = /^([^=]+)=(.*)$/s.exec(argWord ?? "");
        if (!ref || !pair)
          throw configError(
            "invalid_args",
            "complete needs REF (prompt:NAME or resource:URI-TEMPLATE) and ARG=PARTIAL",
          );
        const target: CompletionRef =
          ref[1] === "prompt"
            ? { type: "ref/prompt", name: ref[2]! }
            : { type: "ref/resource", uri: ref[2]! };
        const result = await client.complete(target, { name: pair[1]!, value: pair[2]! }, undefined, {
          signal,
        });
        print(result.completion, renderCompletion(redactor.redactDocument(result.completion)));
        return;
      }
      case "watch": {
        const level = rest[0];
        if (level !== undefined && !(LOGGING_LEVELS as readonly string[]).includes(level))
          throw configError("invalid_option", `the level must be one of ${LOGGING_LEVELS.join(", ")}`);
        output.write(terminal ? "watching; Ctrl-C returns to the prompt\n" : "");
        // The shell's own listener prints every notification; watch() sets the level and waits.
        await watch(client, {
          logLevel: level as LoggingLevel | undefined,
          subscribe: [],
          json,
          signal,
          write: () => {},
          redactor,
        });
        return;
      }
      default:
        throw configError("unknown_command", "unknown shell command (type help)");
    }
  };

  // At a terminal the tool list is fetched up front, so Tab knows tool and argument names.
  if (terminal) void listTools(new AbortController().signal).catch(() => {});
  try {
    if (terminal) rl.prompt();
    atPrompt = true;
    for await (const line of rl) {
      atPrompt = false;
      const w = words(line);
      if (w.length > 0) {
        if (terminal) remember(historyFile, line);
        if (w[0] === "exit" || w[0] === "quit") break;
        running = new AbortController();
        try {
          await run(w, running.signal);
          // Notifications that arrived with the result print before the next prompt.
          await new Promise((resolve) => setImmediate(resolve));
        } catch (error) {
          const e = asTetherError(error, { stage: "config", phase: "call", redactor });
          const record = { ...e.recordFor(redactor) };
          io.stderr(terminal ? errorLines(record, undefined, w[0] ?? "") : `${terminalJson(record)}\n`);
        } finally {
          running = undefined;
        }
        if (io.signal?.aborted) break;
      }
      atPrompt = true;
      if (terminal) rl.prompt();
    }
  } finally {
    atPrompt = false;
    off();
    io.signal?.removeEventListener("abort", offCommand);
    rl.close();
  }
  return 0;
}
