/** The CLI's version, in a module of its own: `--version` and the bridge need it without the help text. */
export const VERSION = "0.1.0";
