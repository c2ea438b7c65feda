import { commandLine } from "@gw/core/command-line";

// `pnpm start [--demo]`: one node process (the root package.json execs it), so a signal sent to
// `pnpm start` reaches it and stops it the graceful way. The command line is read before anything
// else loads: `--help` and a wrong option are answered at once, and the gateway (start.ts), the
// demo's modules and the MCP SDK load only for a start.
const USAGE = "usage: pnpm start [--demo] [--help]";
const HELP = [
  "Starts the all-in-one gateway (control plane, proxy and worker on one port) and prints a dev token.",
  "",
  "  --demo   also start a local echo, MCP and A2A server, create agents for them and print ready",
  "           calls (the same as pnpm demo)",
  "  --help   print this and exit",
  "",
  "Everything else is set by environment variables (README.md, Configuration), for instance:",
  "  PORT=18999 pnpm start        the port to listen on (default 8080)",
  "  DATABASE_URL=postgres://…    Postgres instead of the embedded store",
  "  REDIS_URL=redis://…          Redis instead of the in-process queue and rate limiter",
  "  GW_DATA_DIR=path             where it keeps its data and dev secrets (default .gateway/data;",
  "                               memory keeps nothing)",
  "",
  "Ctrl-C or SIGTERM stops it: calls in flight finish first, within GW_SHUTDOWN_TIMEOUT_MS.",
].join("\n");

const { values } = commandLine({
  args: process.argv.slice(2),
  options: { demo: { type: "boolean" } },
  usage: USAGE,
  help: HELP,
  hint: (option) =>
    /^--?(p|port)$/.test(option) ? "the port is set by the environment: PORT=18999 pnpm start" : undefined,
});
const { start } = await import("./start.ts");
await start({ demo: values.demo ?? false });
