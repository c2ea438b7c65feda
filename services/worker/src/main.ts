import { type Config, ConfigError, loadConfig } from "@gw/config";
import { createBaseApp, listen, onShutdown } from "@gw/http";
import { createRuntime } from "@gw/runtime";
import { startTelemetry } from "@gw/telemetry";
import { startWorker } from "./worker.ts";

let config: Config;
try {
  config = loadConfig(process.env, { defaultPort: 8082 });
  if (!config.REDIS_URL) throw new ConfigError("invalid configuration: REDIS_URL is required by the worker");
} catch (e) {
  console.error(e instanceof ConfigError ? e.message : String(e));
  process.exit(1);
}
const stopTelemetry = await startTelemetry({
  endpoint: config.OTEL_EXPORTER_OTLP_ENDPOINT,
  serviceName: config.OTEL_SERVICE_NAME ?? "gw-worker",
});
const rt = await createRuntime(config, { service: "worker" });
const worker = startWorker(rt);

// Health only: the worker serves no API.
const health = createBaseApp({ logger: rt.logger, accessLog: false });
health.get("/healthz", async (c) => {
  try {
    await Promise.all([rt.store.ping(), rt.redis?.ping()]);
    return c.json({ status: "ok" });
  } catch {
    return c.json({ status: "unavailable" }, 503);
  }
});
const served = await listen(health, config.port);
rt.logger.info({ port: served.port, concurrency: config.GW_WORKER_CONCURRENCY }, "worker running");
onShutdown(rt.logger, config.GW_SHUTDOWN_TIMEOUT_MS, async () => {
  await worker.stop();
  await served.close();
  await rt.close();
  await stopTelemetry();
});
