/**
 * Starts the OpenTelemetry SDK when an OTLP endpoint is configured. Loaded lazily so that a
 * deployment without telemetry does not pay for the SDK's import.
 */
export async function startTelemetry(opts: {
  endpoint: string | undefined;
  serviceName: string;
}): Promise<() => Promise<void>> {
  if (!opts.endpoint) return async () => {};
  const { NodeSDK } = await import("@opentelemetry/sdk-node");
  const { OTLPTraceExporter } = await import("@opentelemetry/exporter-trace-otlp-http");
  const { OTLPMetricExporter } = await import("@opentelemetry/exporter-metrics-otlp-http");
  const { PeriodicExportingMetricReader } = await import("@opentelemetry/sdk-metrics");
  const { resourceFromAttributes } = await import("@opentelemetry/resources");
  const sdk = new NodeSDK({
    resource: resourceFromAttributes({ "service.name": opts.serviceName }),
    traceExporter: new OTLPTraceExporter({ url: `${opts.endpoint.replace(/\/$/, "")}/v1/traces` }),
    metricReader: new PeriodicExportingMetricReader({
      exporter: new OTLPMetricExporter({ url: `${opts.endpoint.replace(/\/$/, "")}/v1/metrics` }),
    }),
  });
  sdk.start();
  return () => sdk.shutdown();
}
