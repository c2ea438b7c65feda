import type { IncomingHttpHeaders } from "node:http";
import { Readable } from "node:stream";
import { type Dispatcher, errors, util } from "undici";
import type { Cancel } from "./cancel.ts";

/**
 * Where a relayed body goes, chunk by chunk, straight from undici's parser: no stream between
 * the upstream socket and the caller's.
 */
export interface BodySink {
  /** A chunk; false when the caller is slow: the upstream read pauses until `resume`. */
  data(chunk: Buffer): boolean;
  end(): void;
  error(e: Error): void;
}

/**
 * What a relay reads a body from: an upstream answer, or a transform standing in front of one
 * (an SSE answer judged event by event). `resume` after a `data` that returned false; `abandon`
 * when the caller is gone.
 */
export interface RelaySource {
  relayTo(sink: BodySink): void;
  resume(): void;
  abandon(e?: Error): void;
}

/** The headers of an answer whose head has not arrived (never read: `opened` resolves after it). */
const NO_HEADERS: IncomingHttpHeaders = Object.freeze({});

/** Read of an answer the caller does not want: at most this much, then the upstream is abandoned. */
const DUMP_MAX_BYTES = 128 * 1024;

/**
 * One upstream request dispatched with undici's handler API, and its answer: the head once it
 * arrived (`opened`), then the body read by whoever wants it. A relay hands it a `BodySink`
 * (`relayTo`); any other reader gets a Readable (`body`), made only when asked for. A small
 * relayed answer thus costs no Readable, no request promise and no abort listener: undici's
 * `request()` made all three per call (docs/performance.md, Streaming: allocation per call).
 *
 * Reading pauses at the head until a reader is attached, and whenever the reader is slow
 * (backpressure is the socket's). The call's `Cancel` aborts it at any point; undici enforces
 * the time-outs (`headersTimeout`, `bodyTimeout`) as for any request.
 */
export class UpstreamAnswer implements Dispatcher.DispatchHandler, RelaySource {
  statusCode = 0;
  headers: IncomingHttpHeaders = NO_HEADERS;
  /** The head arrived (resolves this answer), or the request failed before it (rejects). */
  readonly opened: Promise<UpstreamAnswer>;
  #resolve: ((a: UpstreamAnswer) => void) | null = null;
  #reject: ((e: Error) => void) | null = null;
  #abort: ((e?: Error) => void) | null = null;
  #resume: (() => void) | null = null;
  #sink: BodySink | null = null;
  #body: AnswerBody | null = null;
  /** How the body ended before a reader came: true (whole) or the error. */
  #ended: true | Error | null = null;
  #done = false;

  constructor(private readonly cancel: Cancel) {
    this.opened = new Promise((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    cancel.request = this;
  }

  /** The body relayed to `sink` as it arrives. */
  relayTo(sink: BodySink): void {
    this.#sink = sink;
    const ended = this.#ended;
    if (ended === true) sink.end();
    else if (ended !== null) sink.error(ended);
    else this.resume();
  }

  /** The body as a Readable (made on first use; a relayed answer never has one). */
  get body(): AnswerBody {
    if (this.#body === null) {
      this.#body = new AnswerBody(this);
      this.relayTo(this.#body);
    }
    return this.#body;
  }

  /** A slow reader caught up: the upstream read goes on. */
  resume(): void {
    if (!this.#done) this.#resume?.();
  }

  /** The reader is gone (or the call cancelled): the upstream request is abandoned. */
  abandon(e: Error = new errors.RequestAbortedError()): void {
    if (this.#done) return;
    if (this.#abort) this.#abort(e);
    else this.onError(e);
  }

  /** `Cancel.abort` of the call. */
  cancelled(): void {
    this.abandon();
  }

  onConnect(abort: (e?: Error) => void): void {
    if (this.cancel.aborted) abort(new errors.RequestAbortedError());
    else this.#abort = abort;
  }

  onHeaders(statusCode: number, raw: Buffer[], resume: () => void): boolean {
    if (statusCode < 200) return true; // 1xx: the answer is still to come
    this.statusCode = statusCode;
    this.headers = util.parseHeaders(raw) as IncomingHttpHeaders;
    this.#resume = resume;
    const resolve = this.#resolve;
    this.#resolve = this.#reject = null;
    resolve?.(this);
    // Nothing is read until a reader is attached.
    return this.#sink !== null;
  }

  onData(chunk: Buffer): boolean {
    // undici hands over an empty chunk when a paused parser resumes: nothing to read, and pausing
    // on it again would loop without ever reading the socket.
    if (chunk.length === 0) return true;
    return (this.#sink as BodySink).data(chunk);
  }

  onComplete(): void {
    this.#finish(true);
  }

  onError(e: Error): void {
    if (this.#done) return;
    const reject = this.#reject;
    if (reject !== null) {
      this.#resolve = this.#reject = null;
      this.#done = true;
      this.#release();
      reject(e);
      return;
    }
    this.#finish(e);
  }

  #finish(how: true | Error): void {
    if (this.#done) return;
    this.#done = true;
    this.#release();
    const sink = this.#sink;
    if (sink === null) this.#ended = how;
    else if (how === true) sink.end();
    else sink.error(how);
  }

  #release(): void {
    if (this.cancel.request === this) this.cancel.request = null;
    this.#abort = null;
    this.#resume = null;
  }

  /** The body read and thrown away (at most DUMP_MAX_BYTES, then abandoned). */
  dump(): Promise<void> {
    return new Promise((resolve) => {
      let size = 0;
      this.relayTo({
        data: (chunk) => {
          size += chunk.length;
          if (size > DUMP_MAX_BYTES) this.abandon();
          return true;
        },
        end: resolve,
        error: () => resolve(),
      });
    });
  }
}

/** An answer's body for readers that want a stream (held answers, hooks, retries, members). */
export class AnswerBody extends Readable implements BodySink {
  constructor(private readonly answer: UpstreamAnswer) {
    super({ highWaterMark: 64 * 1024 });
  }

  override _read(): void {
    this.answer.resume();
  }

  override _destroy(e: Error | null, cb: (e?: Error | null) => void): void {
    this.answer.abandon(e ?? undefined);
    cb(e);
  }

  data(chunk: Buffer): boolean {
    return this.push(chunk);
  }

  end(): this {
    this.push(null);
    return this;
  }

  error(e: Error): void {
    this.destroy(e);
  }

  /** The rest of the body read and thrown away (at most DUMP_MAX_BYTES, then abandoned). */
  dump(): Promise<void> {
    return new Promise((resolve) => {
      let size = 0;
      this.on("data", (chunk: Buffer) => {
        size += chunk.length;
        if (size > DUMP_MAX_BYTES) this.destroy();
      });
      this.once("end", () => resolve());
      this.once("close", () => resolve());
      this.once("error", () => resolve());
    });
  }
}
