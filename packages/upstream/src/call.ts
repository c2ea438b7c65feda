import type { IncomingHttpHeaders } from "node:http";
import type { Dispatcher } from "undici";
import { Cancel } from "./cancel.ts";
import { classifyFailure, type FailureClass } from "./classify.ts";
import { openUpstream, type RetryPolicy, type Target } from "./open.ts";

/** The final answer of an upstream call; `body` is whatever the call's reader made of it. */
export type UpstreamAnswerOf<T> = {
  kind: "answer";
  status: number;
  headers: IncomingHttpHeaders;
  body: T;
  attempts: number;
};
export type UpstreamFailure = { kind: "failure"; failure: FailureClass; attempts: number };

export type UpstreamCall = {
  dispatcher: Dispatcher;
  target: Target;
  /** POST unless named. */
  method?: "POST" | "GET" | "DELETE";
  headers: string[];
  body: Buffer | null;
  retry: RetryPolicy;
  /** Deadline of the whole call: every attempt, the back-off between them and the body read. */
  timeoutMs: number;
};

/** An answer whose body is still unread, handed to the reader of `callUpstreamStreaming`. */
export type OpenAnswer = {
  status: number;
  headers: IncomingHttpHeaders;
  body: Dispatcher.ResponseData["body"];
};

/**
 * One transactional upstream call with the shared retry policy (`openUpstream`), the final
 * answer's body read by `read`. Once an answer was handed to `read` nothing is retried: a body
 * that breaks off is a failure of the call (the upstream may have done the work). `read` must
 * report a body it rejects in its result, never by throwing: a thrown error is classified as a
 * network failure.
 */
export async function callUpstreamStreaming<T>(
  opts: UpstreamCall,
  read: (answer: OpenAnswer) => Promise<T>,
): Promise<UpstreamAnswerOf<T> | UpstreamFailure> {
  // The deadline as a Cancel emitter and a timer: no AbortSignal per call (ADR 0022).
  const deadline = new Cancel();
  const timer = setTimeout(() => deadline.abort(), opts.timeoutMs);
  try {
    return await callWithin(opts, read, deadline);
  } finally {
    clearTimeout(timer);
  }
}

async function callWithin<T>(
  opts: UpstreamCall,
  read: (answer: OpenAnswer) => Promise<T>,
  deadline: Cancel,
): Promise<UpstreamAnswerOf<T> | UpstreamFailure> {
  const opened = await openUpstream({
    dispatcher: opts.dispatcher,
    target: opts.target,
    ...(opts.method ? { method: opts.method } : {}),
    headers: opts.headers,
    body: opts.body,
    retry: opts.retry,
    signal: deadline,
    deadline,
    headersTimeout: opts.timeoutMs,
    bodyTimeout: opts.timeoutMs,
  });
  if (opened.kind === "failure") return opened;
  const { res, attempts } = opened;
  try {
    const open = { status: res.statusCode, headers: res.headers, body: res.body };
    const body = await read(open);
    return { kind: "answer", status: open.status, headers: open.headers, body, attempts };
  } catch (e) {
    res.body.destroy();
    return { kind: "failure", failure: deadline.aborted ? "timeout" : classifyFailure(e), attempts };
  }
}

/** A reader of whole bodies: the body, or null once it passes `max` bytes (the read stops). */
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
