import { type Config, ConfigError, loadConfig } from "@gw/config";
import { listen, onShutdown } from "@gw/http";
import { createRuntime } from "@gw/runtime";
import { startTelemetry } from "@gw/telemetry";
import { createProxyApp } from "./app.ts";

let config: Config;
try {
  config = loadConfig(process.env, { defaultPort: 8081 });
} catch (e) {
  console.error(e instanceof ConfigError ? e.message : String(e));
  process.exit(1);
}
const stopTelemetry = await startTelemetry({
  endpoint: config.OTEL_EXPORTER_OTLP_ENDPOINT,
  serviceName: config.OTEL_SERVICE_NAME ?? "gw-proxy",
});
const rt = await createRuntime(config, { service: "proxy" });
const proxy = createProxyApp(rt);
const served = await listen(proxy.app, config.port);
rt.logger.info({ port: served.port, store: rt.store.kind }, "proxy listening");
onShutdown(rt.logger, config.GW_SHUTDOWN_TIMEOUT_MS, async () => {
  await served.close();
  await proxy.inflight.drain();
  await rt.close();
  await stopTelemetry();
});
