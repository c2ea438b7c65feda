import type { IncomingMessage } from "node:http";
import type { Digest } from "@gw/receipts";
import type { OneShotBody } from "@gw/upstream";
import type { Capture } from "./capture.ts";

/**
 * The caller's body of a streaming call as a one-shot stream, counted, teed and hashed as it goes
 * up. Nothing waits for it: a body that has already arrived whole when the upstream is dialled
 * goes up as one buffer in the write of the request head; otherwise each chunk is handed to
 * undici as it arrives (read straight off the request: no async generator and no
 * `stream.finished` bookkeeping per call, docs/performance.md). Either way it stays one-shot for
 * the retry policy: only a connection that took none of it is tried again.
 */
export function uploadOf(
  incoming: IncomingMessage,
  capture: Capture | null,
  digest: Digest | null,
): OneShotBody & { size: () => number } {
  let size = 0;
  let touched = false;
  let held: Buffer | null = null;
  const pass = (chunk: Buffer) => {
    size += chunk.length;
    capture?.add(chunk);
    digest?.update(chunk);
  };
  return {
    touched: () => touched,
    size: () => size,
    stream: () => {
      if (held) return held;
      held = arrived(incoming);
      if (!held) {
        return chunksOf(incoming, (chunk) => {
          touched = true;
          pass(chunk);
        });
      }
      pass(held);
      return held;
    },
  };
}

const EMPTY = Buffer.alloc(0);

/**
 * The whole body when all of it has arrived and none of it was read yet, else null. All of it has
 * arrived when the request ended, or when the bytes waiting in the stream are all its
 * Content-Length declares: Node runs the microtasks after handing over the body and before marking
 * the request complete, so a call admitted from caches gets here in between (most small calls).
 * The stream is resumed so that its end, there or still to come, is consumed. A held body (the
 * proxy's step 4) is taken so too: no listeners and no promise for a body that is already here.
 */
export function arrived(incoming: IncomingMessage): Buffer | null {
  if (incoming.readableDidRead) return null;
  if (
    !incoming.complete &&
    !(incoming.readableLength > 0 && incoming.readableLength === declaredLength(incoming))
  ) {
    return null;
  }
  const whole = incoming.readableLength === 0 ? EMPTY : ((incoming.read() as Buffer | null) ?? EMPTY);
  incoming.resume();
  return whole;
}

/** The body's length as its Content-Length frames it (not for a chunked body), else -1. */
function declaredLength(incoming: IncomingMessage): number {
  const { headers } = incoming;
  const declared = headers["content-length"];
  if (declared === undefined || headers["transfer-encoding"] !== undefined) return -1;
  const n = Number(declared);
  return Number.isSafeInteger(n) ? n : -1;
}

const DONE: IteratorReturnResult<undefined> = { done: true, value: undefined };
/** What Node's own request stream reports for a caller gone mid-upload. */
const aborted = () => Object.assign(new Error("aborted"), { code: "ECONNRESET" });

/**
 * The request's chunks as an async iterable, read with `read()` and one-shot `readable`/`end`
 * waits. A caller gone before the end is an error, like Node's own iterator; so is an early
 * return by the consumer, which destroys the request (the caller's upload is abandoned).
 */
function chunksOf(incoming: IncomingMessage, onChunk: (chunk: Buffer) => void): AsyncIterable<Buffer> {
  const next = (): Promise<IteratorResult<Buffer>> => {
    const chunk = incoming.read() as Buffer | null;
    if (chunk !== null) {
      onChunk(chunk);
      return Promise.resolve({ done: false, value: chunk });
    }
    if (incoming.readableEnded) return Promise.resolve(DONE);
    if (incoming.destroyed) return Promise.reject(aborted());
    return new Promise((resolve, reject) => {
      const settle = (then: () => void) => () => {
        incoming.off("readable", onReadable).off("end", onEnd).off("error", onError).off("close", onClose);
        then();
      };
      const onReadable = settle(() => next().then(resolve, reject));
      const onEnd = settle(() => resolve(DONE));
      const onError = (e: Error) => settle(() => reject(e))();
      const onClose = settle(() => (incoming.readableEnded ? resolve(DONE) : reject(aborted())));
      incoming.once("readable", onReadable).once("end", onEnd).once("error", onError).once("close", onClose);
    });
  };
  const iterator: AsyncIterator<Buffer> = {
    next,
    return: () => {
      if (!incoming.readableEnded) incoming.destroy();
      return Promise.resolve(DONE);
    },
  };
  return { [Symbol.asyncIterator]: () => iterator };
}
