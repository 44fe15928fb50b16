// The `tether` binary's entry. It loads the least it can before it knows what was asked: a bare
// `--version` is answered from here, and everything else loads with the command (the bundle keeps
// the rest in chunks that are read only then).
import nodeModule from "node:module";
import { VERSION } from "./version.ts";

// V8's compiled code for the CLI's chunks is kept between runs where the runtime can (Node 22.1+);
// Node 20 has no compile cache and starts without one.
(nodeModule as { enableCompileCache?: () => unknown }).enableCompileCache?.();

const argv = process.argv.slice(2);
if (argv.length === 1 && (argv[0] === "--version" || argv[0] === "-V")) {
  process.stdout.write(`${VERSION}\n`);
} else {
  const { runCli } = await import("./cli-process.ts");
  await runCli(argv);
}
