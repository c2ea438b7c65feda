import type { IncomingHttpHeaders } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import type { Dispatcher } from "undici";
import {
  backoffMs,
  classifyFailure,
  type FailureClass,
  isConnectionFailure,
  isRetryableStatus,
} from "./classify.ts";

/** Origin and path of an upstream URL, parsed once per agent (not per call). */
export type Target = { origin: string; path: string };

export function targetOf(url: string): Target {
  const u = new URL(url);
  return { origin: u.origin, path: `${u.pathname}${u.search}` };
}

export type RetryPolicy = { retries: number; baseMs: number; retryable: boolean };

/** The final answer of an upstream call; `body` is whatever the call's reader made of it. */
export type UpstreamAnswerOf<T> = {
  kind: "answer";
  status: number;
  headers: IncomingHttpHeaders;
  body: T;
  attempts: number;
};
export type UpstreamAnswer = UpstreamAnswerOf<Buffer>;
export type UpstreamFailure = { kind: "failure"; failure: FailureClass | "too_large"; attempts: number };

export type UpstreamCall = {
  dispatcher: Dispatcher;
  target: Target;
  headers: string[];
  body: Buffer;
  retry: RetryPolicy;
  /** Deadline of the whole call: every attempt, the back-off between them and the body read. */
  timeoutMs: number;
  signal?: AbortSignal | undefined;
};

/** An answer whose body is still unread, handed to the reader of `callUpstreamStreaming`. */
export type OpenAnswer = {
  status: number;
  headers: IncomingHttpHeaders;
  body: Dispatcher.ResponseData["body"];
};

/**
 * One transactional upstream call with the retry policy, the body read by `read`: connection
 * failures and 502/503/504 are tried again (when the call is retryable) with jittered exponential
 * back-off; anything else is final. A retryable status is retried before its body is read (the
 * body is discarded); an I/O error while `read` runs counts as a connection failure of that
 * attempt. `read` must report a body it rejects in its result, never by throwing: a thrown error
 * is classified as a network failure.
 */
export async function callUpstreamStreaming<T>(
  opts: UpstreamCall,
  read: (answer: OpenAnswer) => Promise<T>,
): Promise<UpstreamAnswerOf<T> | UpstreamFailure> {
  const maxAttempts = opts.retry.retryable ? opts.retry.retries + 1 : 1;
  const deadline = AbortSignal.timeout(opts.timeoutMs);
  const signal = opts.signal ? AbortSignal.any([deadline, opts.signal]) : deadline;
  for (let attempt = 1; ; attempt++) {
    const mayRetry = attempt < maxAttempts;
    let failure: unknown;
    try {
      const res = await opts.dispatcher.request({
        origin: opts.target.origin,
        path: opts.target.path,
        method: "POST",
        headers: opts.headers,
        body: opts.body,
        signal,
        headersTimeout: opts.timeoutMs,
        bodyTimeout: opts.timeoutMs,
      });
      if (mayRetry && isRetryableStatus(res.statusCode) && !signal.aborted) {
        await res.body.dump().catch(() => {});
      } else {
        const open = { status: res.statusCode, headers: res.headers, body: res.body };
        const body = await read(open);
        return { kind: "answer", status: open.status, headers: open.headers, body, attempts: attempt };
      }
    } catch (e) {
      failure = e;
      if (!mayRetry || signal.aborted || !isConnectionFailure(e)) {
        // A deadline that fired is a timeout whatever undici reports.
        return {
          kind: "failure",
          failure: deadline.aborted ? "timeout" : classifyFailure(failure),
          attempts: attempt,
        };
      }
    }
    await sleep(backoffMs(attempt - 1, opts.retry.baseMs), undefined, { signal }).catch(() => {});
    if (signal.aborted) {
      return { kind: "failure", failure: deadline.aborted ? "timeout" : "cancelled", attempts: attempt };
    }
  }
}

/** `callUpstream`'s reader: the whole body, or null once it passes `max` bytes (the read stops). */
export async function readCapped(body: AsyncIterable<Uint8Array>, max: number): Promise<Buffer | null> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.byteLength;
    if (size > max) return null; // leaving the loop destroys the stream
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size);
}

/** `callUpstreamStreaming` with the response body read whole, capped at `maxResponseBytes`. */
export async function callUpstream(
  opts: UpstreamCall & { maxResponseBytes: number },
): Promise<UpstreamAnswer | UpstreamFailure> {
  const r = await callUpstreamStreaming(opts, (a) => readCapped(a.body, opts.maxResponseBytes));
  if (r.kind === "failure") return r;
  if (r.body === null) return { kind: "failure", failure: "too_large", attempts: r.attempts };
  return { ...r, body: r.body };
}
