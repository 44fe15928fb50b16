/** Opens a URL in the user's browser (open, start, xdg-open), detached; quietly nothing where there is none. */
import { spawn } from "node:child_process";

export function openUrl(url: string): void {
  const [command, args] =
    process.platform === "darwin"
      ? ["open", [url]]
      : process.platform === "win32"
        ? ["cmd", ["/c", "start", "", url]]
        : ["xdg-open", [url]];
  try {
    const child = spawn(command, args as string[], { stdio: "ignore", detached: true });
    child.on("error", () => {});
    child.unref();
  } catch {
    // No browser here: the printed URL is enough.
  }
}
