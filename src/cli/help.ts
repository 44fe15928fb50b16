export const VERSION = "0.1.0";

export const HELP = `tether ${VERSION}: an MCP client that cannot hang, cannot leak and says what failed

Usage:
  tether tools  <target> [options]                list the server's tools
  tether call   <target> <tool> [ARGS] [options]  call one tool
  tether resources <target> [options]             list resources
  tether read   <target> <uri> [options]          read one resource
  tether prompts <target> [options]               list prompts
  tether prompt <target> <name> [ARGS] [options]  get one prompt
  tether servers [--config FILE]                  list servers found in config files

Targets: an http(s) URL, a server name from a config file, or -- CMD ARGS... (stdio; then
leave <target> out and put every option before --).
ARGS: one JSON object, or key=value (string) and key:=json pairs, or --args-file FILE.

Options:
  --transport auto|streamable-http|sse   -H, --header 'Name: value'   -e, --env KEY=VALUE
  --bearer-env VAR                       --protocol-version V         --max-protocol-version V
  --timeout MS   --discovery-timeout MS (--connect-timeout)   --call-timeout MS
  --probe-timeout MS   --handshake-timeout MS   --max-bytes N   --discovery-max-bytes N
  --call-max-bytes N   --max-frame-bytes N   --retry N   --json   --events   --debug
  --server-stderr   --config FILE   --args-file FILE

Examples:
  tether tools http://127.0.0.1:3000/mcp
  tether call echo message=hi -- npx -y @modelcontextprotocol/server-everything
  tether call https://example.com/mcp search query=mcp --bearer-env API_TOKEN --json

Exit statuses: 0 ok, 1 tool error, 2 config, 3 connection/protocol, 4 timeout, 5 limit,
6 unauthorized/forbidden, 7 throttled/upstream/remote error, 8 internal, 130 cancelled.
`;
