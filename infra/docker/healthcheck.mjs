// Container health check: GET /healthz on the service's own port (no curl in the slim image).
// /healthz answers 503 when Postgres (or Redis, when configured) does not answer.
const defaults = { proxy: 8081, worker: 8082 };
const port = process.env.PORT || defaults[process.env.GW_SERVICE] || 8080;
try {
  const res = await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(2500) });
  process.exit(res.ok ? 0 : 1);
} catch {
  process.exit(1);
}
