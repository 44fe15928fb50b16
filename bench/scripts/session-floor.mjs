// The no-library floor for a call through a session: a bare Node script that speaks the session
// socket directly (one JSON object per line) and makes the same three requests a
// `tether call @NAME echo` makes: the session's info, the tool listing, the call. Nothing is
// checked or bounded; what a real command costs beyond this is the CLI's own.
//
//   XDG_RUNTIME_DIR=... node bench/scripts/session-floor.mjs NAME
import { connect } from "node:net";
import { join } from "node:path";

const name = process.argv[2] ?? "bench";
const socket = connect(join(process.env.XDG_RUNTIME_DIR ?? "", "tether", "sessions.sock"));
const requests = [
  { op: "info", session: name },
  { op: "call", session: name, method: "listTools", args: [null], options: {} },
  { op: "call", session: name, method: "callTool", args: ["echo", { message: "hi" }, null], options: {} },
];
let next = 0;
let pending = "";
const send = () => socket.write(`${JSON.stringify({ id: next + 1, ...requests[next] })}\n`);
socket.on("connect", send);
socket.on("data", (chunk) => {
  pending += chunk;
  for (let end = pending.indexOf("\n"); end >= 0; end = pending.indexOf("\n")) {
    const frame = JSON.parse(pending.slice(0, end));
    pending = pending.slice(end + 1);
    if (!("ok" in frame)) throw new Error(`session-floor: ${JSON.stringify(frame).slice(0, 200)}`);
    if (++next < requests.length) send();
    else {
      process.stdout.write(`${frame.ok.content[0].text}\n`);
      socket.end();
    }
  }
});
