import { configureMetrics, resetInstruments } from "./metrics.ts";

/**
 * Starts the OpenTelemetry SDK when an OTLP endpoint is configured. Loaded lazily so that a
 * deployment without telemetry does not pay for the SDK's import.
 */
export async function startTelemetry(opts: {
  endpoint: string | undefined;
  serviceName: string;
  /** GW_METRICS_TENANT_LABELS: add `tenant_id` to the per-call metrics. */
  tenantLabels?: boolean;
  /** OTEL_METRIC_EXPORT_INTERVAL; default 60 s. */
  metricIntervalMs?: number;
}): Promise<() => Promise<void>> {
  configureMetrics({ tenantLabels: opts.tenantLabels ?? false });
  if (!opts.endpoint) return async () => {};
  const { NodeSDK } = await import("@opentelemetry/sdk-node");
  const { OTLPTraceExporter } = await import("@opentelemetry/exporter-trace-otlp-http");
  const { OTLPMetricExporter } = await import("@opentelemetry/exporter-metrics-otlp-http");
  const { PeriodicExportingMetricReader } = await import("@opentelemetry/sdk-metrics");
  const { resourceFromAttributes } = await import("@opentelemetry/resources");
  const { UndiciInstrumentation } = await import("@opentelemetry/instrumentation-undici");
  const { BatchLogRecordProcessor } = await import("@opentelemetry/sdk-logs");
  const { OTLPLogExporter } = await import("@opentelemetry/exporter-logs-otlp-http");
  const sdk = new NodeSDK({
    resource: resourceFromAttributes({ "service.name": opts.serviceName }),
    traceExporter: new OTLPTraceExporter({ url: `${opts.endpoint.replace(/\/$/, "")}/v1/traces` }),
    // Client spans for every upstream call (undici reports through diagnostics_channel, so load
    // order does not matter). Server spans come from the base app's middleware. Neither records
    // headers or bodies, so tokens, credentials and payments stay out of traces.
    instrumentations: [new UndiciInstrumentation()],
    metricReader: new PeriodicExportingMetricReader({
      exporter: new OTLPMetricExporter({ url: `${opts.endpoint.replace(/\/$/, "")}/v1/metrics` }),
      exportIntervalMillis: opts.metricIntervalMs ?? 60_000,
    }),
    // Log records (today the audit events, `emitAuditRecord`); flushed on shutdown like spans.
    logRecordProcessors: [
      new BatchLogRecordProcessor(
        new OTLPLogExporter({ url: `${opts.endpoint.replace(/\/$/, "")}/v1/logs` }),
      ),
    ],
  });
  sdk.start();
  resetInstruments();
  return () => sdk.shutdown();
}
