/** What a log line may say about an error. */
export type SafeError = { name: string; code?: string | number; message: string; stack?: string };

const MESSAGE_MAX = 300;

/**
 * Removes values from an error message: anything quoted or in parentheses after `=`, long digit
 * and hex runs. Postgres messages quote the offending input (`invalid input syntax for type uuid:
 * "…"`), and drivers append parameters; the shape of the message is kept, the data is not.
 */
export function stripValues(message: string): string {
  // Drizzle's DrizzleQueryError is "Failed query: <sql>\nparams: <values>": only the first line
  // of any message is kept, and of that one not the SQL.
  const first = (message.split("\n", 1)[0] ?? "").replace(/^Failed query: .*/, "Failed query");
  return first
    .replace(/"(?:[^"\\]|\\.)*"/g, '"…"')
    .replace(/'(?:[^'\\]|\\.)*'/g, "'…'")
    .replace(/=\([^)]*\)/g, "=(…)")
    .replace(/\b(?:0x)?[0-9a-f]{16,}\b/gi, "…")
    .replace(/[A-Za-z0-9+/_-]{32,}={0,2}/g, "…")
    .slice(0, MESSAGE_MAX);
}

/** The stack's frames only: its first line repeats the (unsafe) message. */
function framesOf(stack: unknown): string | undefined {
  if (typeof stack !== "string") return undefined;
  const frames = stack.split("\n").filter((l) => /^\s+at /.test(l));
  return frames.length > 0 ? frames.slice(0, 20).join("\n") : undefined;
}

/**
 * The safe subset of an error for logs: name, code, a value-free message and the stack frames.
 * Never the fields drivers attach (postgres-js `parameters`, `query`, `detail`, `where`), never
 * `cause`. Idempotent, so it is also pino's `err` serializer.
 */
export function safeError(err: unknown, depth = 0): SafeError {
  if (typeof err === "string") return { name: "Error", message: stripValues(err) };
  if (typeof err !== "object" || err === null) return { name: typeof err, message: "" };
  const e = err as { name?: unknown; code?: unknown; message?: unknown; stack?: unknown };
  const out: SafeError = {
    name: typeof e.name === "string" ? e.name.slice(0, 100) : "Error",
    message: typeof e.message === "string" ? stripValues(e.message) : "",
  };
  if ((typeof e.code === "string" && e.code.length <= 40) || typeof e.code === "number") out.code = e.code;
  // A wrapper (drizzle) says little; the driver error it wraps says what failed. One level, flattened.
  const cause = (err as { cause?: unknown }).cause;
  if (typeof cause === "object" && cause !== null && depth < 2) {
    const inner = safeError(cause, depth + 1);
    if (out.code === undefined && inner.code !== undefined) out.code = inner.code;
    if (inner.message)
      out.message = `${out.message} (cause: ${inner.name}: ${inner.message})`.slice(0, 2 * MESSAGE_MAX);
  }
  const stack = framesOf(e.stack);
  if (stack) out.stack = stack;
  return out;
}
