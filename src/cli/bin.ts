// The `tether` binary's entry. It loads the least it can before it knows what was asked: a bare
// `--version` is answered from here, and everything else loads with the command (the bundle keeps
// the rest in chunks that are read only then).

// V8's compiled code for the CLI's chunks is kept between runs where the runtime can (Node 22.3+,
// asked without importing node:module, which a start would pay for); Node 20 has no compile cache
// and starts without one (Bun keeps its own transpiler cache).
(process as { getBuiltinModule?: (id: string) => { enableCompileCache?: () => unknown } | undefined })
  .getBuiltinModule?.("node:module")
  ?.enableCompileCache?.();

const argv = process.argv.slice(2);
if (argv.length === 1 && (argv[0] === "--version" || argv[0] === "-V")) {
  const { VERSION } = await import("./version.ts");
  process.stdout.write(`${VERSION}\n`);
} else if (argv[0] === "call" && argv[1]?.startsWith("@")) {
  // A call on a session, the hot path of sessions: one small file (session-entry.ts), one request
  // on the session socket; a command line it does not take goes to the whole CLI, loaded then.
  const { runSessionCall } = await import("./session-entry.ts");
  await runSessionCall(
    argv,
    () => import("./main.ts").then((m) => m.main),
    () => import("./ask.ts"),
  );
} else {
  const [{ runCli }, { main }] = await Promise.all([import("./cli-process.ts"), import("./main.ts")]);
  await runCli(argv, main, () => import("./ask.ts"));
}
