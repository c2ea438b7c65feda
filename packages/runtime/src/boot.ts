import cluster from "node:cluster";
import { createServer } from "node:net";
import { type Config, ConfigError, loadConfig, processEnv } from "@gw/config";
import { drainWindowMs, type Fetchable, listen, onShutdown, type Served } from "@gw/http";
import { startTelemetry } from "@gw/telemetry";
import { SHUTDOWN_MESSAGE } from "./processes.ts";
import { createRuntime, type Kept, type Runtime } from "./runtime.ts";

/**
 * The start-up every service shares: configuration parsed once (a bad value prints one line and
 * exits 1, as does a PORT already in use — found before migrations run, so the user waits for
 * nothing), telemetry, the runtime, then `serve` listens and wires graceful shutdown: stop
 * accepting, let in-flight requests finish, run the service's own `stop`, close the runtime.
 */
export async function boot(opts: {
  service: string;
  defaultPort: number;
  env?: Record<string, string | undefined>;
  /** Extra start-up checks; throw ConfigError to refuse to start. */
  check?: (config: Config) => void;
  /** The process serves the proxy paths: no whole-request time-out (see `listen`). */
  longRequests?: boolean;
  /** The all-in-one gateway's data directory: its store on disk, its kept key. */
  kept?: Kept;
}): Promise<{ rt: Runtime; serve: (app: Fetchable, stop?: () => Promise<void>) => Promise<Served> }> {
  let config: Config;
  try {
    config = loadConfig(opts.env ?? processEnv(), { defaultPort: opts.defaultPort });
    opts.check?.(config);
  } catch (e) {
    console.error(e instanceof ConfigError ? e.message : String(e));
    process.exit(1);
  }
  // A process of several (GW_PROXY_PROCESSES) shares its supervisor's port: nothing to probe.
  if (cluster.isPrimary && config.port !== 0) await portFree(config.port).catch(portRefused(config.port));
  const stopTelemetry = await startTelemetry({
    endpoint: config.OTEL_EXPORTER_OTLP_ENDPOINT,
    serviceName: config.OTEL_SERVICE_NAME ?? `gw-${opts.service}`,
    tenantLabels: config.GW_METRICS_TENANT_LABELS,
    metricIntervalMs: config.OTEL_METRIC_EXPORT_INTERVAL,
  });
  const rt = await createRuntime(config, {
    service: opts.service,
    ...(opts.kept ? { kept: opts.kept } : {}),
  });
  return {
    rt,
    serve: async (app, stop) => {
      const served = await listen(app, config.port, "0.0.0.0", {
        drainMs: drainWindowMs(config.GW_SHUTDOWN_TIMEOUT_MS),
        longRequests: opts.longRequests ?? false,
      }).catch(portRefused(config.port));
      rt.logger.info(
        {
          port: served.port,
          store: rt.store.kind,
          ...(rt.store.dataDir ? { data_dir: rt.store.dataDir } : {}),
        },
        `${opts.service} listening`,
      );
      const shutdown = onShutdown(rt.logger, config.GW_SHUTDOWN_TIMEOUT_MS, async () => {
        await served.close();
        await stop?.();
        await rt.close();
        await stopTelemetry();
      });
      // One of several processes (GW_PROXY_PROCESSES): its supervisor says when to stop.
      process.on("message", (m) => {
        if (m === SHUTDOWN_MESSAGE) shutdown("supervisor");
      });
      return served;
    },
  };
}

/** Binds and releases `port`, rejecting as `listen` would (EADDRINUSE, EACCES). */
function portFree(port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen({ port, host: "0.0.0.0", exclusive: true }, () => probe.close(() => resolve()));
  });
}

/** The port is configuration: one line naming PORT and exit 1, not a stack trace. */
function portRefused(port: number): (e: unknown) => never {
  return (e) => {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "EADDRINUSE") console.error(`PORT ${port} is already in use; set PORT to another port`);
    else if (code === "EACCES")
      console.error(`PORT ${port} may not be bound here; set PORT to one above 1023`);
    else throw e;
    process.exit(1);
  };
}
