import { processEnv } from "@gw/config";
import { boot } from "@gw/runtime";
import { createGateway } from "./app.ts";
import { commandLine } from "./cli.ts";
import type { DemoUpstreams } from "./demo/index.ts";
import { devBanner, devTokenCommand, ensureDevAuth } from "./dev.ts";

// `pnpm start [--demo]`: one node process (the root package.json execs it), so a signal sent to
// `pnpm start` reaches it and stops it the graceful way. The demo's modules (and the MCP SDK) load
// only when asked for.
const USAGE = "usage: pnpm start [--demo] [--help]";
const HELP = [
  "Starts the all-in-one gateway (control plane, proxy and worker on one port) and prints a dev token.",
  "",
  "  --demo   also start a local echo and MCP server, create agents for them and print ready calls",
  "           (the same as pnpm demo)",
  "  --help   print this and exit",
  "",
  "Everything else is set by environment variables (README.md, Configuration), for instance:",
  "  PORT=18999 pnpm start        the port to listen on (default 8080)",
  "  DATABASE_URL=postgres://…    Postgres instead of the embedded in-memory store",
  "  REDIS_URL=redis://…          Redis instead of the in-process queue and rate limiter",
  "  GW_DEV_FILE=path             where the generated dev secret is kept (default .gw-dev.json)",
  "",
  "Ctrl-C or SIGTERM stops it: calls in flight finish first, within GW_SHUTDOWN_TIMEOUT_MS.",
].join("\n");

const args = commandLine({
  args: process.argv.slice(2),
  options: { demo: { type: "boolean" } },
  usage: USAGE,
  help: HELP,
  hint: (option) =>
    /^--?(p|port)$/.test(option) ? "the port is set by the environment: PORT=18999 pnpm start" : undefined,
});
const env = processEnv();
const devAuth = ensureDevAuth(env);
const demo = args.demo ? await import("./demo/index.ts") : undefined;
let upstreams: DemoUpstreams | undefined;
if (demo) {
  upstreams = await demo.startDemoUpstreams(env).catch((e: unknown) => {
    process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
  });
}
const { rt, serve } = await boot({ service: "gateway", defaultPort: 8080, env, longRequests: true });
if (rt.config.store === "memory") {
  rt.logger.warn("DATABASE_URL is not set: using the embedded in-memory store (dev only)");
}
const gateway = createGateway(rt);
const served = await serve(gateway, async () => {
  await gateway.stop();
  await upstreams?.close();
});
const banner =
  demo && upstreams && rt.config.GW_DEV_JWT_SECRET
    ? await demo.seedDemo({
        port: served.port,
        secret: rt.config.GW_DEV_JWT_SECRET,
        upstreams,
        tokenCommand: devTokenCommand(rt.config),
      })
    : await devBanner(rt.config, served.port, devAuth.file);
if (banner) process.stderr.write(`${banner}\n`);
