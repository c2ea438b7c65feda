import { ConfigError, loadConfig } from "@gw/config";
import { listen, onShutdown } from "@gw/http";
import { createRuntime } from "@gw/runtime";
import { startTelemetry } from "@gw/telemetry";
import { createControlPlaneApp } from "./app.ts";

let config: ReturnType<typeof loadConfig>;
try {
  config = loadConfig(process.env, { defaultPort: 8080 });
} catch (e) {
  console.error(e instanceof ConfigError ? e.message : String(e));
  process.exit(1);
}
const stopTelemetry = await startTelemetry({
  endpoint: config.OTEL_EXPORTER_OTLP_ENDPOINT,
  serviceName: config.OTEL_SERVICE_NAME ?? "gw-control-plane",
});
const rt = await createRuntime(config, { service: "control-plane" });
const served = await listen(createControlPlaneApp(rt), config.port);
rt.logger.info({ port: served.port, store: rt.store.kind }, "control plane listening");
onShutdown(rt.logger, config.GW_SHUTDOWN_TIMEOUT_MS, async () => {
  await served.close();
  await rt.close();
  await stopTelemetry();
});
