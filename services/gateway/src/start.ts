import { processEnv } from "@gw/config";
import { boot } from "@gw/runtime";
import { createGateway } from "./app.ts";
import { DataDirError, openDataDir } from "./data-dir/index.ts";
import type { DemoUpstreams } from "./demo/index.ts";
import { devBanner, devTokenCommand, ensureDevAuth } from "./dev.ts";

/**
 * `pnpm start` once its command line is read (main.ts): the data directory first (one gateway per
 * directory: a second one stops here), then the gateway on one port and its banner on stderr;
 * with `demo`, the demo's local upstreams and agents too.
 */
export async function start(opts: { demo: boolean }): Promise<void> {
  const env = processEnv();
  const data = await openDataDir(env).catch((e: unknown) => {
    if (!(e instanceof DataDirError)) throw e;
    process.stderr.write(`${e.message}\n`);
    process.exit(e.exitCode);
  });
  const devSecret = ensureDevAuth(env, data);
  const demo = opts.demo ? await import("./demo/index.ts") : undefined;
  let upstreams: DemoUpstreams | undefined;
  if (demo) {
    upstreams = await demo.startDemoUpstreams(env).catch((e: unknown) => {
      process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
      process.exit(1);
    });
  }
  const { rt, serve } = await boot({
    service: "gateway",
    defaultPort: 8080,
    env,
    longRequests: true,
    kept: {
      ...(data?.store ? { storeDir: data.path } : {}),
      ...(data?.key ? { key: data.key } : {}),
    },
  });
  if (rt.store.kind === "embedded") {
    rt.logger.warn(
      rt.store.dataDir
        ? `DATABASE_URL is not set: using the embedded store on disk in ${rt.store.dataDir} (GW_DATA_DIR; development only)`
        : "DATABASE_URL is not set and GW_DATA_DIR=memory: using the embedded in-memory store, lost when the process stops (development only)",
    );
  }
  for (const warning of data?.warnings ?? []) rt.logger.warn(warning);
  const gateway = createGateway(rt);
  const served = await serve(gateway, async () => {
    await gateway.stop();
    // The demo's upstreams serve the calls the drain above let finish: they close after it.
    await upstreams?.close();
  });
  const tokenCommand = devTokenCommand(rt.config, devSecret);
  const banner =
    demo && upstreams && rt.config.GW_DEV_JWT_SECRET
      ? await demo.seedDemo({
          port: served.port,
          secret: rt.config.GW_DEV_JWT_SECRET,
          upstreams,
          tokenCommand,
        })
      : await devBanner({ config: rt.config, store: rt.store, port: served.port, data, tokenCommand });
  if (banner) process.stderr.write(`${banner}\n`);
}
