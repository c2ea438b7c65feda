import { boot } from "@gw/runtime";
import { createGateway } from "./app.ts";
import type { DemoUpstreams } from "./demo/index.ts";
import { devBanner, ensureDevAuth } from "./dev.ts";

// `pnpm start [--demo]`. The demo's modules (and the MCP SDK) load only when asked for.
const demoMode = process.argv.slice(2).includes("--demo");
const env = { ...process.env };
const devAuth = ensureDevAuth(env);
const demo = demoMode ? await import("./demo/index.ts") : undefined;
let upstreams: DemoUpstreams | undefined;
if (demo) upstreams = await demo.startDemoUpstreams(env);
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
    ? await demo.seedDemo({ port: served.port, secret: rt.config.GW_DEV_JWT_SECRET, upstreams })
    : await devBanner(rt.config, devAuth.file);
if (banner) process.stderr.write(`${banner}\n`);
