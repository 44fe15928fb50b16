/**
 * The command table: every command's name and where its module is. A new command is one module
 * in this folder (its name, help, flags and run: see ../command.ts) and one line here. Each module
 * loads only when its command runs (the CLI bundle keeps each in a chunk of its own); the order is
 * the order of the completion scripts.
 */
import type { CommandModule } from "../command.ts";

export const COMMANDS: Readonly<Record<string, () => Promise<CommandModule>>> = {
  tools: () => import("./tools.ts"),
  call: () => import("./call.ts"),
  probe: () => import("./probe.ts"),
  resources: () => import("./resources.ts"),
  read: () => import("./read.ts"),
  prompts: () => import("./prompts.ts"),
  prompt: () => import("./prompt.ts"),
  templates: () => import("./templates.ts"),
  complete: () => import("./complete.ts"),
  watch: () => import("./watch.ts"),
  types: () => import("./types.ts"),
  skills: () => import("./skills.ts"),
  skill: () => import("./skill.ts"),
  session: () => import("./session.ts"),
  shell: () => import("./shell.ts"),
  servers: () => import("./servers.ts"),
  bridge: () => import("./bridge.ts"),
  inspect: () => import("./inspect.ts"),
  auth: () => import("./auth.ts"),
  completion: () => import("./completion.ts"),
};

/** Every command's name, in the table's order. */
export const COMMAND_NAMES = Object.keys(COMMANDS);

/** The command called `name`, loaded; undefined for a name that is none. */
export async function loadCommand(name: string): Promise<CommandModule["command"] | undefined> {
  return Object.hasOwn(COMMANDS, name) ? (await COMMANDS[name]!()).command : undefined;
}

/** Every command, loaded (help for all of them, the commands that take a flag). */
export async function allCommands(): Promise<CommandModule["command"][]> {
  return Promise.all(COMMAND_NAMES.map(async (name) => (await COMMANDS[name]!()).command));
}

/** The commands that take `flag` by name, in the order --help lists them. */
export async function commandsTaking(flag: string): Promise<string[]> {
  const { HELP } = await import("../help.ts");
  const at = (name: string) => HELP.indexOf(`tether ${name} `);
  return (await allCommands())
    .filter((c) => c.flags.includes(flag as never))
    .map((c) => c.name)
    .sort((a, b) => at(a) - at(b));
}
