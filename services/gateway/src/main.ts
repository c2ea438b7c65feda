import { boot } from "@gw/runtime";
import { createGateway } from "./app.ts";
import { devBanner, ensureDevAuth } from "./dev.ts";

const env = { ...process.env };
const devAuth = ensureDevAuth(env);
const { rt, serve } = await boot({ service: "gateway", defaultPort: 8080, env, longRequests: true });
if (rt.config.store === "memory") {
  rt.logger.warn("DATABASE_URL is not set: using the embedded in-memory store (dev only)");
}
const gateway = createGateway(rt);
await serve(gateway, () => gateway.stop());
const banner = await devBanner(rt.config, devAuth.file);
if (banner) process.stderr.write(`${banner}\n`);
