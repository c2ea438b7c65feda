import { type Config, ConfigError, loadConfig } from "@gw/config";
import { listen, onShutdown } from "@gw/http";
import { createRuntime } from "@gw/runtime";
import { startTelemetry } from "@gw/telemetry";
import { createGateway } from "./app.ts";
import { devBanner, ensureDevAuth } from "./dev.ts";

const env = { ...process.env };
const { generated } = ensureDevAuth(env);
let config: Config;
try {
  config = loadConfig(env, { defaultPort: 8080 });
} catch (e) {
  console.error(e instanceof ConfigError ? e.message : String(e));
  process.exit(1);
}
const stopTelemetry = await startTelemetry({
  endpoint: config.OTEL_EXPORTER_OTLP_ENDPOINT,
  serviceName: config.OTEL_SERVICE_NAME ?? "gw-gateway",
});
const rt = await createRuntime(config, { service: "gateway" });
if (config.store === "memory")
  rt.logger.warn("DATABASE_URL is not set: using the embedded in-memory store (dev only)");
const gateway = createGateway(rt);
const served = await listen(gateway, config.port);
rt.logger.info(
  { port: served.port, store: rt.store.kind, dev_secret_generated: generated },
  "gateway listening",
);
const banner = await devBanner(config);
if (banner) process.stderr.write(`${banner}\n`);
onShutdown(rt.logger, config.GW_SHUTDOWN_TIMEOUT_MS, async () => {
  await served.close();
  await gateway.stop();
  await rt.close();
  await stopTelemetry();
});
