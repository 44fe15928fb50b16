/** The options only `tether bridge` (and, for `--idle-timeout`, `session start`) takes, in parseArgs form. */
export const BRIDGE_FLAGS = {
  listen: { type: "string" },
  "allow-remote": { type: "boolean" },
  "listen-token-env": { type: "string" },
  "idle-timeout": { type: "string" },
} as const;
