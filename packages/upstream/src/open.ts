import type { Dispatcher } from "undici";
import { type Cancel, pause } from "./cancel.ts";
import {
  backoffMs,
  classifyFailure,
  type FailureClass,
  isConnectionFailure,
  isRetryableStatus,
} from "./classify.ts";

/** Origin, path and host name of an upstream URL, parsed once per agent (not per call). */
export type Target = { origin: string; path: string; host: string };

export function targetOf(url: string): Target {
  const u = new URL(url);
  return { origin: u.origin, path: `${u.pathname}${u.search}`, host: u.hostname };
}

export type RetryPolicy = { retries: number; baseMs: number; retryable: boolean };

/**
 * A request body that can be sent once only: retried only while not a byte of it was read. Its
 * `stream` may hand over the whole body as one buffer when it has already arrived.
 */
export type OneShotBody = { stream: () => AsyncIterable<Uint8Array> | Buffer; touched: () => boolean };

export type OpenRequest = {
  dispatcher: Dispatcher;
  target: Target;
  method?: "POST" | "GET" | "DELETE";
  headers: string[];
  /** A held body (can be sent again), a one-shot stream, or none. */
  body: Buffer | OneShotBody | null;
  retry: RetryPolicy;
  signal: Cancel;
  /** When this signal fired, a failure is a time-out whatever undici reports. */
  deadline?: Cancel | undefined;
  headersTimeout: number;
  bodyTimeout: number;
};

export type Opened =
  | { kind: "open"; res: Dispatcher.ResponseData; attempts: number }
  | { kind: "failure"; failure: FailureClass; attempts: number };

/**
 * Opens one upstream request with the retry policy both proxy modes share (docs/interface.md, Proxy):
 * connection failures, and 502/503/504 answers whose body is discarded, are tried again with
 * jittered exponential back-off when the call is retryable. Nothing is retried once an answer was
 * handed out: what happens to its body afterwards is final. A one-shot body is retried only while
 * none of it was read; a 5xx answer to it is final (it cannot be sent again).
 */
export async function openUpstream(req: OpenRequest): Promise<Opened> {
  const maxAttempts = req.retry.retryable ? req.retry.retries + 1 : 1;
  const oneShot = req.body !== null && !Buffer.isBuffer(req.body) ? req.body : null;
  const failure = (e: unknown, attempts: number): Opened => ({
    kind: "failure",
    failure: req.deadline?.aborted ? "timeout" : classifyFailure(e),
    attempts,
  });
  for (let attempt = 1; ; attempt++) {
    const mayRetry = () => attempt < maxAttempts && !req.signal.aborted;
    try {
      const res = await req.dispatcher.request({
        origin: req.target.origin,
        path: req.target.path,
        method: req.method ?? "POST",
        headers: req.headers,
        // undici streams async iterables; its types list only Readable.
        body: (oneShot ? oneShot.stream() : req.body) as unknown as Buffer,
        signal: req.signal,
        headersTimeout: req.headersTimeout,
        bodyTimeout: req.bodyTimeout,
      });
      if (!(oneShot === null && mayRetry() && isRetryableStatus(res.statusCode))) {
        return { kind: "open", res, attempts: attempt };
      }
      await res.body.dump().catch(() => {});
    } catch (e) {
      if (!mayRetry() || !isConnectionFailure(e) || oneShot?.touched()) return failure(e, attempt);
    }
    await pause(backoffMs(attempt - 1, req.retry.baseMs), req.signal);
    if (req.signal.aborted) {
      return { kind: "failure", failure: req.deadline?.aborted ? "timeout" : "cancelled", attempts: attempt };
    }
  }
}
