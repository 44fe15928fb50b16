/**
 * Server elicitation: on a terminal the server's message is shown, each field of its requested
 * schema is asked for in turn, and each answer converted to the declared type. Only a person at a
 * terminal is asked; elsewhere (piped, or with --json) the capability is still declared and every
 * request is answered `decline` at once, so a server that asks learns that no one will answer,
 * rather than being refused as though it spoke out of turn or waiting for a reply that cannot come.
 */
import { terminalBlock, terminalLine } from "../errors/terminal-text.ts";
import type { JsonObject } from "../jsonrpc/messages.ts";
import { convert, typeLabel } from "./schema-args.ts";

const isObject = (v: unknown): v is JsonObject => typeof v === "object" && v !== null && !Array.isArray(v);

/** The CLI's elicitation handler: asked on the terminal when `ask` is given, else declined. */
export function cliElicitation(
  ask: ((prompt: string, signal: AbortSignal) => Promise<string>) | undefined,
  write: (text: string) => void,
) {
  return ask ? terminalElicitation(ask, write) : async (): Promise<JsonObject> => ({ action: "decline" });
}

/** The elicitation handler: asks with `ask` (one line per field), writes the message with `write`. */
export function terminalElicitation(
  ask: (prompt: string, signal: AbortSignal) => Promise<string>,
  write: (text: string) => void,
) {
  return async (params: JsonObject, context: { signal: AbortSignal }): Promise<JsonObject> => {
    write(`\n${terminalBlock(String(params.message ?? "The server asks for input."))}\n`);
    // A URL elicitation would send the person elsewhere: it is declined rather than opened.
    if (params.mode === "url") return { action: "decline" };
    const schema = isObject(params.requestedSchema) ? params.requestedSchema : {};
    const properties = isObject(schema.properties) ? schema.properties : {};
    const required = new Set(Array.isArray(schema.required) ? schema.required.map(String) : []);
    write("(empty skips an optional field; !decline or !cancel refuses)\n");
    const content: JsonObject = {};
    for (const [name, raw] of Object.entries(properties)) {
      const property = isObject(raw) ? raw : {};
      const title = typeof property.title === "string" ? property.title : name;
      const label = `${terminalLine(title)} (${terminalLine(typeLabel(property))}${required.has(name) ? "" : ", optional"})`;
      for (;;) {
        const answer = (await ask(`${label}: `, context.signal)).trim();
        if (answer === "!decline") return { action: "decline" };
        if (answer === "!cancel") return { action: "cancel" };
        if (answer === "" && !required.has(name)) break;
        const fitted = answer === "" ? undefined : convert(answer, property);
        if (fitted !== undefined) {
          content[name] = fitted;
          break;
        }
        write(
          answer === ""
            ? "an answer is required\n"
            : `that does not fit ${terminalLine(typeLabel(property))}\n`,
        );
      }
    }
    return { action: "accept", content };
  };
}
