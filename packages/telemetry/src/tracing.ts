import { type Attributes, trace } from "@opentelemetry/api";

/**
 * The project's tracer. Without an SDK registered (no OTEL endpoint) it is the API's no-op
 * implementation, so instrumenting costs next to nothing when telemetry is off. Metric
 * instruments are in metrics.ts.
 */
export const tracer = trace.getTracer("agent-gateway");

/** Adds attributes to the active span, if any (known only once a span's work is under way). */
export function annotateSpan(attributes: Attributes): void {
  trace.getActiveSpan()?.setAttributes(attributes);
}
