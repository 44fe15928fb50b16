import { extraFlags } from "./flags.ts";
import { VERSION } from "./version.ts";

const TARGETS = `Targets: an http(s) URL, a server name from a config file, or -- CMD ARGS... (a stdio
server; then leave <target> out and put every option before --). A stdio server gets a short
environment (PATH, HOME and the like, never your secrets): pass what it needs with -e KEY=VALUE.`;

const COMMON = `Connection options:
  --transport auto|streamable-http|sse   HTTP transport (auto follows the spec's detection)
  -H, --header 'Name: value'             extra HTTP header, repeatable
  -e, --env KEY=VALUE                    extra environment for a stdio server, repeatable
  --bearer-env VAR                       send Authorization: Bearer $VAR
  --protocol-version V                   exact pin          --max-protocol-version V   ceiling
  --timeout MS                           baseline time budget, both phases
  --discovery-timeout MS                 the whole establishment deadline (alias --connect-timeout)
  --call-timeout MS                      each call's deadline
  --probe-timeout MS, --handshake-timeout MS   sub-limits inside the discovery deadline
  --max-bytes N                          baseline byte ceiling per response, both phases
  --discovery-max-bytes N, --call-max-bytes N, --max-frame-bytes N
  --retry N                              opt-in recovery: at most N attempts in all
  --no-oauth                             never sign in (OAuth); --stored-auth-only: stored tokens only
  --client-id ID, --client-secret-env VAR, --client-key-file FILE   a pre-registered OAuth client
  --grant authorization_code|client_credentials|jwt_bearer|token_exchange   --scope 'a b'
  --assertion-file FILE, --assertion-env VAR   the JWT for jwt_bearer, the ID token for token_exchange
  --idp-token-endpoint URL, --idp-client-id ID, --idp-client-secret-env VAR   token_exchange's IdP
  --dpop                                 DPoP-bound tokens   --application-type native|web
  --config FILE                          read server names from this file only
  --fresh                                detect the era afresh (ignore and refresh the remembered one)
  --json   --events   --debug   --server-stderr`;

export const HELP = `tether ${VERSION}: an MCP client that cannot hang, cannot leak and says what failed

Usage:
  tether tools  <target> [options]                list the server's tools
  tether call   <target> <tool> [ARGS] [options]  call one tool
  tether probe  <target>... [options]             establish only; report how it went
  tether resources <target> [options]             list resources
  tether read   <target> <uri> [options]          read one resource
  tether prompts <target> [options]               list prompts
  tether prompt <target> <name> [ARGS] [options]  get one prompt
  tether templates <target> [options]             list resource templates
  tether complete <target> <ref> <arg>=<partial>  completion values (ref: prompt:NAME or resource:URI-TEMPLATE)
  tether watch <target> [--log-level L] [--subscribe URI]... [--duration MS]
                                                  stream server notifications until Ctrl-C
  tether types <target> [-o FILE]                 TypeScript declarations for the tools
  tether session start <name> <target> [--idle-timeout MS]   keep a connection open as @name
  tether session list | stop <name>               the live sessions; end one
  tether shell <target|@name>                     an interactive prompt on one connection
  tether servers [--config FILE]                  list servers found in config files
  tether auth login|logout|status <target>        sign in (OAuth), sign out, show the stored token
  tether bridge <target> [--listen HOST:PORT]     serve the target to an MCP host (stdio, or HTTP)
  tether completion bash|zsh|fish                 print a shell completion script
  tether <command> --help                         help for one command

${TARGETS}
ARGS: one JSON object, or key=value and key:=json pairs, or --args-file FILE (- reads stdin).
key=value is converted to the type the tool's schema declares (number, integer, boolean, enum);
key:=json is sent as written. Unknown tools, unknown or missing arguments are refused before the
call is sent, with the closest names suggested.

${COMMON}

Examples:
  tether tools http://127.0.0.1:3000/mcp
  tether call echo message=hi -- npx -y @modelcontextprotocol/server-everything
  tether call https://example.com/mcp search query=mcp --bearer-env API_TOKEN --json

Exit statuses: 0 ok, 1 tool error, 2 config, 3 connection/protocol, 4 timeout, 5 limit,
6 unauthorized/forbidden, 7 throttled/upstream/remote error, 8 internal, 130 cancelled.
`;

const COMMANDS: Record<string, { usage: string; about: string; examples: string[] }> = {
  tools: {
    usage: "tether tools <target> [options]",
    about: "Lists the server's tools (every page), each with a compact signature of its input schema.",
    examples: [
      "tether tools http://127.0.0.1:3000/mcp",
      "tether tools --json -- node server.js",
      "tether tools my-server --config ./.mcp.json",
    ],
  },
  call: {
    usage: "tether call <target> <tool> [ARGS] [options]",
    about:
      "Calls one tool, once (never re-sent). Prints its text content, or with --json the whole result.\nA result with isError: true prints the same way and exits 1. The arguments are checked against\nthe tool's input schema first (one tools/list). -o FILE writes its image, audio or blob content\ndecoded (- for stdout).",
    examples: [
      "tether call http://127.0.0.1:3000/mcp echo message=hi",
      "tether call my-server get-sum a=2 b=3 --json",
      "tether call my-server get-tiny-image -o tiny.png",
      `echo '{"a":2,"b":3}' | tether call my-server get-sum --args-file -`,
      `tether call https://example.com/mcp search '{"query":"mcp"}' --call-timeout 60000`,
      "tether call echo message=hi -- npx -y @modelcontextprotocol/server-everything",
    ],
  },
  probe: {
    usage: "tether probe <target>... [options]",
    about:
      "Establishes only, several targets at once, and reports era, negotiated version, transport,\nattempts and time per stage for each.",
    examples: [
      "tether probe http://a.local/mcp http://b.local/mcp",
      "tether probe my-server --json",
      "tether probe --max-protocol-version 2025-11-25 -- node server.js",
    ],
  },
  resources: {
    usage: "tether resources <target> [options]",
    about: "Lists the server's resources.",
    examples: ["tether resources http://127.0.0.1:3000/mcp", "tether resources my-server --json"],
  },
  read: {
    usage: "tether read <target> <uri> [options]",
    about:
      "Reads one resource and prints its text. Binary contents are named, not printed, unless asked:\n-o, --output FILE writes the first content's bytes to FILE (- for stdout); --json prints the whole result.",
    examples: [
      "tether read my-server demo://greeting",
      "tether read my-server demo://logo.png -o logo.png",
      "tether read demo://doc --json -- npx -y @modelcontextprotocol/server-everything",
    ],
  },
  prompts: {
    usage: "tether prompts <target> [options]",
    about: "Lists the server's prompts.",
    examples: ["tether prompts http://127.0.0.1:3000/mcp"],
  },
  prompt: {
    usage: "tether prompt <target> <name> [ARGS] [options]",
    about: "Gets one prompt with its arguments and prints its messages.",
    examples: ["tether prompt my-server greet name=Ada", "tether prompt my-server greet --json name=Ada"],
  },
  templates: {
    usage: "tether templates <target> [options]",
    about: "Lists the server's resource templates (URI templates, whole when piped).",
    examples: ["tether templates my-server", "tether templates my-server --json"],
  },
  complete: {
    usage: "tether complete <target> <ref> <arg>=<partial> [<arg>=<value>...] [options]",
    about:
      "Asks the server to complete one argument of a prompt (ref prompt:NAME) or of a resource\ntemplate (ref resource:URI-TEMPLATE). Prints one value a line; arguments already chosen may\nfollow as NAME=VALUE. With --json, the completion object (values, total, hasMore).",
    examples: [
      "tether complete my-server prompt:greet name=A",
      "tether complete my-server 'resource:demo://doc/{id}' id=1 --json",
    ],
  },
  watch: {
    usage: "tether watch <target> [--log-level L] [--subscribe URI]... [--duration MS] [options]",
    about:
      "Prints the server's notifications as they arrive, one line each (with --json, one JSON object\na line): log messages at --log-level and above, list changes, updates of each --subscribe'd\nresource, and progress. Ends on Ctrl-C or after --duration MS (exit 0).",
    examples: [
      "tether watch my-server --log-level info",
      "tether watch my-server --subscribe demo://doc --json --duration 60000",
    ],
  },
  types: {
    usage: "tether types <target> [-o FILE] [options]",
    about:
      "Writes TypeScript declarations for the server's tools: <Tool>Input (the arguments), <Tool>Output\n(the structuredContent, where the tool declares an output schema) and a Tools map from each\ntool's name to both. -o FILE writes them to FILE. --json prints {declarations, tools}\n(with -o, only tools: each tool's type names).",
    examples: ["tether types my-server -o my-server.d.ts", "tether types --json -- node server.js"],
  },
  session: {
    usage: "tether session start <name> <target> [--idle-timeout MS] [options] | list | stop <name>",
    about:
      "Keeps a connection open in a per-user background process: start establishes it once (with every\nconnection option), then any command takes @name as its target and reuses it (no spawn, no\nhandshake; the session's state stays). A session ends on stop, after --idle-timeout MS without\nuse (default 1800000), or when its server goes away. list shows name, target, era, version,\ntransport, age and idle time.",
    examples: [
      "tether session start demo -- npx -y @modelcontextprotocol/server-everything",
      "tether call @demo echo message=hi",
      "tether session list",
      "tether session stop demo",
    ],
  },
  shell: {
    usage: "tether shell <target|@name> [options]",
    about:
      "An interactive prompt on one connection: tools, call NAME k=v, read URI, prompt NAME k=v,\ntemplates, complete REF ARG=PARTIAL, watch (until Ctrl-C), help, exit. Tab completes commands,\ntool names and argument names; server notifications print between prompts; history is kept in\nthe state folder.",
    examples: ["tether shell @demo", "tether shell -- node server.js"],
  },
  servers: {
    usage: "tether servers [--config FILE] [--json]",
    about:
      "Lists the servers found in config files (./.mcp.json, ./.vscode/mcp.json, ./.cursor/mcp.json,\n~/.claude.json (with this folder's project servers), the user's Cursor, VS Code, Windsurf and\nClaude Desktop configs, ~/.codex/config.toml), with every secret redacted.",
    examples: ["tether servers", "tether servers --config ./.mcp.json --json"],
  },
  bridge: {
    usage: "tether bridge <target> [--listen HOST:PORT [--allow-remote --listen-token-env VAR]] [options]",
    about:
      "Serves the target to an MCP host on stdin/stdout (or, with --listen, over Streamable HTTP and\nHTTP+SSE at /mcp and /sse), with every budget, ceiling and error rule of the client, translating\nbetween protocol eras. A non-loopback --listen needs --allow-remote and a bearer token from\n--listen-token-env; --idle-timeout MS ends an unused HTTP session (default 1800000).",
    examples: [
      "tether bridge https://example.com/mcp --call-timeout 120000",
      "tether bridge -- npx -y @modelcontextprotocol/server-everything",
      "tether bridge --listen 127.0.0.1:8808 -- node server.js",
    ],
  },
  auth: {
    usage: "tether auth login|logout|status <target> [options]",
    about:
      "Signs in to a server that requires OAuth and stores the token (owner-only file in the config\nfolder, TETHER_CONFIG_DIR overrides it); signs out; or shows what is stored (never the token).\nlogin waits for the browser within the discovery budget (300000 ms unless set). Other commands\nsign in by themselves on a terminal; in scripts they use stored tokens only.",
    examples: [
      "tether auth login https://example.com/mcp",
      "tether auth status https://example.com/mcp --json",
      "tether tools https://example.com/mcp --stored-auth-only",
      "tether tools https://example.com/mcp --grant client_credentials --client-id ci --client-secret-env CI_SECRET",
    ],
  },
  completion: {
    usage: "tether completion bash|zsh|fish",
    about: "Prints a completion script for your shell.",
    examples: [
      'eval "$(tether completion bash)"',
      "tether completion fish > ~/.config/fish/completions/tether.fish",
    ],
  },
};

export const COMMAND_NAMES = Object.keys(COMMANDS);

/** How a command's own options read in its help. */
const FLAG_USAGE: Record<string, string> = {
  "args-file": "--args-file FILE (- reads stdin)",
  output: "-o, --output FILE (- for stdout)",
  config: "--config FILE",
  json: "--json",
  "log-level": "--log-level debug|info|notice|warning|error|critical|alert|emergency",
  subscribe: "--subscribe URI (repeatable)",
  duration: "--duration MS",
  "idle-timeout": "--idle-timeout MS",
  task: "--task (run as a task where the server supports tasks)",
  "progress-timeout": "--progress-timeout MS (each progress notification restarts the call clock)",
  listen: "--listen HOST:PORT (serve over HTTP instead of stdio)",
  "allow-remote": "--allow-remote (a non-loopback --listen address)",
  "listen-token-env": "--listen-token-env VAR (the bearer token HTTP hosts must send)",
};

export function commandHelp(command: string): string | undefined {
  const c = COMMANDS[command];
  if (!c) return undefined;
  const needsTarget = !["servers", "completion"].includes(command);
  const own = extraFlags(command).filter((f) => !needsTarget || !["config", "json"].includes(f));
  const ownLine = own.length
    ? `\nOptions for ${command}: ${own.map((f) => FLAG_USAGE[f] ?? `--${f}`).join(", ")}\n`
    : "";
  return `Usage: ${c.usage}

${c.about}
${ownLine}${needsTarget ? `\n${TARGETS}\n\n${COMMON}\n` : ""}
Examples:
${c.examples.map((e) => `  ${e}`).join("\n")}
`;
}
