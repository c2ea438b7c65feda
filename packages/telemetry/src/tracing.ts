import { type Attributes, metrics, type Span, SpanStatusCode, trace } from "@opentelemetry/api";

/**
 * The project's tracer and meter. Without an SDK registered (no OTEL endpoint) these are the API's
 * no-op implementations, so instrumenting costs next to nothing when telemetry is off.
 */
export const tracer = trace.getTracer("agent-gateway");
export const meter = metrics.getMeter("agent-gateway");

export const proxyCalls = meter.createCounter("gw.proxy.calls", {
  description: "Proxy calls by mode and outcome",
});
export const upstreamDuration = meter.createHistogram("gw.upstream.duration", {
  description: "Upstream call duration",
  unit: "ms",
});

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
