/**
 * Server-side limits. The handlers enforce these constants and /v1/capabilities reports the same
 * objects, so the two cannot drift.
 */
export const MiB = 1024 * 1024;

export const LIMITS = Object.freeze({
  transactMaxBodyBytes: 32 * MiB,
  capturedBodyMaxBytes: 1 * MiB,
  modelHeaderMaxBytes: 256,
  bundleMaxBytes: 1 * MiB,
  invocationsMaxLimit: 100,
  policyDecisionsMaxLimit: 100,
  analyticsMaxRangeDays: 31,
  agentEventMaxRangeDays: 31,
  agentEventMaxBytes: 32 * 1024,
  /** Control-plane JSON write bodies. */
  jsonBodyMaxBytes: 256 * 1024,
  listDefaultLimit: 20,
  retryAfterMaxSeconds: 60,
});
