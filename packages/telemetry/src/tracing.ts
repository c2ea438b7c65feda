import { type Attributes, type Meter, metrics, type Span, SpanStatusCode, trace } from "@opentelemetry/api";

/**
 * The project's tracer and meter. Without an SDK registered (no OTEL endpoint) these are the API's
 * no-op implementations, so instrumenting costs next to nothing when telemetry is off.
 */
export const tracer = trace.getTracer("agent-gateway");
/**
 * Metric instruments, created on first use. The metrics API has no proxy provider: an instrument
 * made before the SDK registers stays a no-op for ever, and modules load before telemetry starts.
 */
function lazy<T>(make: (meter: Meter) => T): { get: () => T; reset: () => void } {
  let made: T | undefined;
  return { get: () => (made ??= make(metrics.getMeter("agent-gateway"))), reset: () => (made = undefined) };
}

const instruments = {
  proxyCalls: lazy((m) =>
    m.createCounter("gw.proxy.calls", { description: "Proxy calls by mode and outcome" }),
  ),
  upstreamDuration: lazy((m) =>
    m.createHistogram("gw.upstream.duration", { description: "Upstream call duration", unit: "ms" }),
  ),
  rateLimitFallback: lazy((m) =>
    m.createCounter("gw.ratelimit.fallback", {
      description: "Rate-limit decisions taken from the local bucket because Redis did not answer",
    }),
  ),
  receiptFailures: lazy((m) =>
    m.createCounter("gw.receipts.failures", {
      description: "Receipts that were not emitted (signing or storing failed, timed out or was shed)",
    }),
  ),
};

export const proxyCalls = { add: (n: number, a?: Attributes) => instruments.proxyCalls.get().add(n, a) };
export const upstreamDuration = {
  record: (ms: number, a?: Attributes) => instruments.upstreamDuration.get().record(ms, a),
};
export const rateLimitFallback = {
  add: (n: number, a?: Attributes) => instruments.rateLimitFallback.get().add(n, a),
};

export const receiptFailures = {
  add: (n: number, a?: Attributes) => instruments.receiptFailures.get().add(n, a),
};

/** Called once the SDK is registered, so instruments bind to the real provider. */
export function resetInstruments(): void {
  for (const i of Object.values(instruments)) i.reset();
}

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
