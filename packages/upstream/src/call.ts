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

export type UpstreamAnswer = {
  kind: "answer";
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
  attempts: number;
};
export type UpstreamFailure = { kind: "failure"; failure: FailureClass | "too_large"; attempts: number };

/**
 * One transactional upstream call with the retry policy: connection failures and 502/503/504 are
 * tried again (when the call is retryable) with jittered exponential back-off; anything else is
 * final. The response body is read whole, capped at `maxResponseBytes`.
 */
export async function callUpstream(opts: {
  dispatcher: Dispatcher;
  target: Target;
  headers: string[];
  body: Buffer;
  retry: RetryPolicy;
  timeoutMs: number;
  maxResponseBytes: number;
  signal?: AbortSignal | undefined;
}): Promise<UpstreamAnswer | UpstreamFailure> {
  const maxAttempts = opts.retry.retryable ? opts.retry.retries + 1 : 1;
  const deadline = AbortSignal.timeout(opts.timeoutMs);
  const signal = opts.signal ? AbortSignal.any([deadline, opts.signal]) : deadline;
  for (let attempt = 1; ; attempt++) {
    let answer: UpstreamAnswer | undefined;
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
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of res.body) {
        size += (chunk as Buffer).length;
        if (size > opts.maxResponseBytes) {
          res.body.destroy();
          return { kind: "failure", failure: "too_large", attempts: attempt };
        }
        chunks.push(chunk as Buffer);
      }
      answer = {
        kind: "answer",
        status: res.statusCode,
        headers: res.headers,
        body: Buffer.concat(chunks, size),
        attempts: attempt,
      };
    } catch (e) {
      failure = e;
    }
    const again =
      attempt < maxAttempts &&
      !signal.aborted &&
      (answer ? isRetryableStatus(answer.status) : isConnectionFailure(failure));
    if (!again) {
      if (answer) return answer;
      // A deadline that fired is a timeout whatever undici reports.
      return {
        kind: "failure",
        failure: deadline.aborted ? "timeout" : classifyFailure(failure),
        attempts: attempt,
      };
    }
    await sleep(backoffMs(attempt - 1, opts.retry.baseMs), undefined, { signal }).catch(() => {});
  }
}
