import { type DestinationStream, type Logger, pino } from "pino";
import { safeError } from "./safe-error.ts";

export type { DestinationStream, Logger } from "pino";

/**
 * Paths that may carry secrets. Belt and braces: code never logs secrets on purpose, and these
 * paths are censored in case a header bag or an input object is logged whole.
 */
const REDACT = [
  "secret",
  "*.secret",
  "headers.authorization",
  "headers.Authorization",
  "*.headers.authorization",
  "headers['x-payment']",
  "*.headers['x-payment']",
  "token",
  "*.token",
  // Driver error fields that carry SQL and its bound values (postgres-js), wherever an error or
  // its cause lands in a log object.
  "parameters",
  "*.parameters",
  "*.*.parameters",
  "*.*.*.parameters",
  "params",
  "*.params",
  "*.*.params",
  "query",
  "*.query",
  "*.*.query",
  "*.*.*.query",
  "detail",
  "*.detail",
  "*.*.detail",
  "*.where",
  "*.*.where",
  "cause",
  "*.cause",
  "*.*.cause",
];

/** Structured JSON logs on stdout (or the given stream, which tests use to assert on output). */
export function createLogger(opts: { level: string; service: string; stream?: DestinationStream }): Logger {
  return pino(
    {
      level: opts.level,
      base: { service: opts.service },
      redact: { paths: REDACT, censor: "[redacted]" },
      // Errors logged as `err` (or `error`) keep only the safe subset: see safeError.
      serializers: { err: safeError, error: safeError },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    opts.stream,
  );
}
