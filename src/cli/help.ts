import type { Command } from "./command.ts";
import { extraFlags, helpUsage } from "./flag-table.ts";
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
  tether skills <target>                          list the server's skills (SEP-2640)
  tether skill <target> <name> -o DIR             fetch one skill, verified, into DIR
  tether session start <name> <target> [--idle-timeout MS]   keep a connection open as @name
  tether session list | stop <name>               the live sessions; end one
  tether shell <target|@name>                     an interactive prompt on one connection
  tether servers [--config FILE]                  list servers found in config files
  tether auth login|logout|status <target>        sign in (OAuth), sign out, show the stored token
  tether bridge <target> [--listen HOST:PORT]     serve the target to an MCP host (stdio, or HTTP)
  tether inspect [<target>|@NAME|NAME...] [--port N] [--no-open]
                                                  the web explorer; prints its URL first
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

/** A command's own help: its usage, what it does, its own options, and for one that connects the common ones. */
export function commandHelp(c: Command): string {
  const needsTarget = c.flags.includes("transport");
  const own = extraFlags(c.flags).filter((f) => !needsTarget || !["config", "json"].includes(f));
  const ownLine = own.length ? `\nOptions for ${c.name}: ${own.map(helpUsage).join(", ")}\n` : "";
  return `Usage: ${c.usage}

${c.summary}
${ownLine}${needsTarget ? `\n${TARGETS}\n\n${COMMON}\n` : ""}
Examples:
${c.examples
  .trim()
  .split("\n")
  .map((e) => `  ${e}`)
  .join("\n")}
`;
}
