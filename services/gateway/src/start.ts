import { processEnv } from "@gw/config";
import { boot } from "@gw/runtime";
import { createGateway } from "./app.ts";
import type { DemoUpstreams } from "./demo/index.ts";
import { devBanner, devTokenCommand, ensureDevAuth } from "./dev.ts";

/**
 * `pnpm start` once its command line is read (main.ts): the gateway on one port, its banner on
 * stderr; with `demo`, the demo's local upstreams and agents too.
 */
export async function start(opts: { demo: boolean }): Promise<void> {
  const env = processEnv();
  const devAuth = ensureDevAuth(env);
  const demo = opts.demo ? await import("./demo/index.ts") : undefined;
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
}
