import { resetInstruments } from "@gw/telemetry";
import { context, metrics, propagation, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { UndiciInstrumentation } from "@opentelemetry/instrumentation-undici";
import { type DataPoint, MeterProvider, MetricReader } from "@opentelemetry/sdk-metrics";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";

/** A reader that collects only when asked. */
class ManualReader extends MetricReader {
  protected override async onShutdown(): Promise<void> {}
  protected override async onForceFlush(): Promise<void> {}
}

/**
 * Registers a real tracer provider (in-memory exporter), context manager, W3C propagator, meter
 * provider and the undici instrumentation, as the NodeSDK does in the services.
 */
export function startTestTelemetry() {
  const spans = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(tracerProvider);
  const reader = new ManualReader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  metrics.setGlobalMeterProvider(meterProvider);
  resetInstruments();
  const undici = new UndiciInstrumentation();
  undici.setTracerProvider(tracerProvider);
  undici.enable();

  /** The data points of one metric at this moment. */
  const points = async (name: string): Promise<Array<DataPoint<unknown>>> => {
    const { resourceMetrics } = await reader.collect();
    for (const scope of resourceMetrics.scopeMetrics)
      for (const m of scope.metrics)
        if (m.descriptor.name === name) return m.dataPoints as Array<DataPoint<unknown>>;
    return [];
  };

  return {
    spans,
    points,
    stop: async () => {
      undici.disable();
      await tracerProvider.shutdown();
      await meterProvider.shutdown();
      trace.disable();
      context.disable();
      propagation.disable();
      metrics.disable();
      resetInstruments();
    },
  };
}
