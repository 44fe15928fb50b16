// The no-library floor for a call through a session: a bare Node script that speaks the session
// socket directly (one JSON object per line) and makes the same single request a
// `tether call @NAME echo message=hi` makes (`tool`: the session process checks the arguments
// against the schema it holds, and calls). Nothing is checked or bounded here; what a real
// command costs beyond this is the CLI's own.
//
//   XDG_RUNTIME_DIR=... node bench/scripts/session-floor.mjs NAME
import { connect } from "node:net";
import { join } from "node:path";

const name = process.argv[2] ?? "bench";
const socket = connect(join(process.env.XDG_RUNTIME_DIR ?? "", "tether", "sessions.sock"));
const request = {
  id: 1,
  op: "tool",
  session: name,
  tool: "echo",
  args: { message: "hi" },
  plain: ["message"],
  options: {},
};
let pending = "";
socket.on("connect", () => socket.write(`${JSON.stringify(request)}\n`));
socket.on("data", (chunk) => {
  pending += chunk;
  for (let end = pending.indexOf("\n"); end >= 0; end = pending.indexOf("\n")) {
    const frame = JSON.parse(pending.slice(0, end));
    pending = pending.slice(end + 1);
    if ("calling" in frame) continue;
    if (!("ok" in frame)) throw new Error(`session-floor: ${JSON.stringify(frame).slice(0, 200)}`);
    process.stdout.write(`${frame.ok.content[0].text}\n`);
    socket.end();
  }
});
