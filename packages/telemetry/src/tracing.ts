import { type Attributes, type Span, SpanStatusCode, trace } from "@opentelemetry/api";

/**
 * The project's tracer. Without an SDK registered (no OTEL endpoint) it is the API's no-op
 * implementation, so instrumenting costs next to nothing when telemetry is off. Metric
 * instruments are in metrics.ts.
 */
export const tracer = trace.getTracer("agent-gateway");

/** Run `fn` in a span that records an exception and ends whatever happens. */
export async function inSpan<T>(
  name: string,
  attributes: Attributes,
  fn: (span: Span) => Promise<T>,
): Promise<T> {
  return tracer.startActiveSpan(name, { attributes }, async (span) => {
    try {
      return await fn(span);
    } catch (e) {
      // Only the class name: error messages from lower layers may carry internal detail.
      span.setStatus({ code: SpanStatusCode.ERROR, message: e instanceof Error ? e.name : "error" });
      throw e;
    } finally {
      span.end();
    }
  });
}

/** Adds attributes to the active span, if any (known only once a span's work is under way). */
export function annotateSpan(attributes: Attributes): void {
  trace.getActiveSpan()?.setAttributes(attributes);
}
