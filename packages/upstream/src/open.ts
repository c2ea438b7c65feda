import type { Dispatcher } from "undici";
import { UpstreamAnswer } from "./answer.ts";
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

export type OpenedOf<R> =
  | { kind: "open"; res: R; attempts: number }
  | { kind: "failure"; failure: FailureClass; attempts: number };
export type Opened = OpenedOf<Dispatcher.ResponseData>;

/**
 * Opens one upstream request with the retry policy both proxy modes share (docs/interface.md, Proxy):
 * connection failures, and 502/503/504 answers whose body is discarded, are tried again with
 * jittered exponential back-off when the call is retryable. Nothing is retried once an answer was
 * handed out: what happens to its body afterwards is final. A one-shot body is retried only while
 * none of it was read; a 5xx answer to it is final (it cannot be sent again).
 */
export function openUpstream(req: OpenRequest): Promise<Opened> {
  return retried(req, requestOnce, dumpResponse);
}

/**
 * `openUpstream` through undici's dispatch API: the answer's body is read by whoever takes it
 * (`UpstreamAnswer`), with no Readable unless one is asked for. The streaming relay's dial.
 */
export function openStream(req: OpenRequest): Promise<OpenedOf<UpstreamAnswer>> {
  return retried(req, dispatchOnce, dumpAnswer);
}

type Send<R> = (req: OpenRequest, body: Buffer | AsyncIterable<Uint8Array> | null) => Promise<R>;

function requestOnce(req: OpenRequest, body: Buffer | AsyncIterable<Uint8Array> | null) {
  return req.dispatcher.request(optionsOf(req, body, req.signal));
}

const dumpResponse = (res: Dispatcher.ResponseData) => res.body.dump();
const dumpAnswer = (answer: UpstreamAnswer) => answer.dump();

function dispatchOnce(req: OpenRequest, body: Buffer | AsyncIterable<Uint8Array> | null) {
  const answer = new UpstreamAnswer(req.signal);
  // The call's Cancel reaches the answer directly (`Cancel.request`), not as a signal.
  req.dispatcher.dispatch(optionsOf(req, body, undefined), answer);
  return answer.opened;
}

function optionsOf(
  req: OpenRequest,
  body: Buffer | AsyncIterable<Uint8Array> | null,
  signal: Cancel | undefined,
) {
  return {
    origin: req.target.origin,
    path: req.target.path,
    method: req.method ?? "POST",
    headers: req.headers,
    // undici streams async iterables; its types list only Readable.
    body: body as unknown as Buffer,
    headersTimeout: req.headersTimeout,
    bodyTimeout: req.bodyTimeout,
    signal,
  } as const;
}

async function retried<R extends { statusCode: number }>(
  req: OpenRequest,
  send: Send<R>,
  discard: (res: R) => Promise<void>,
): Promise<OpenedOf<R>> {
  const maxAttempts = req.retry.retryable ? req.retry.retries + 1 : 1;
  const oneShot = req.body !== null && !Buffer.isBuffer(req.body) ? req.body : null;
  for (let attempt = 1; ; attempt++) {
    const lastAttempt = attempt >= maxAttempts;
    try {
      const res = await send(req, oneShot ? oneShot.stream() : (req.body as Buffer | null));
      if (oneShot !== null || lastAttempt || req.signal.aborted || !isRetryableStatus(res.statusCode)) {
        return { kind: "open", res, attempts: attempt };
      }
      await discard(res).catch(() => {});
    } catch (e) {
      if (lastAttempt || req.signal.aborted || !isConnectionFailure(e) || oneShot?.touched()) {
        return {
          kind: "failure",
          failure: req.deadline?.aborted ? "timeout" : classifyFailure(e),
          attempts: attempt,
        };
      }
    }
    await pause(backoffMs(attempt - 1, req.retry.baseMs), req.signal);
    if (req.signal.aborted) {
      return { kind: "failure", failure: req.deadline?.aborted ? "timeout" : "cancelled", attempts: attempt };
    }
  }
}
