import type { Failure } from "@gw/invocations";
import { classifyFailure, type RelaySource } from "@gw/upstream";

/** A held answer body: whole within the bound, or abandoned past it. */
export type Held = { kind: "held"; body: Buffer; whole: true } | { kind: "held"; body: null; whole: false };

/**
 * Reads an answer body that a feature holds before the caller sees it (a `tools/list` answer to
 * filter, a guarded result), up to `maxBytes` (or until `endsAt` says it is complete): past it the
 * upstream is abandoned and nothing is kept. The chunks come straight from undici's parser, as a
 * relay gets them (no Readable: its end destroyed the body, and that abort built an error with a
 * stack for every held answer); a body of one chunk is that chunk, not a copy. The stream's idle
 * time-out still applies; an upstream that breaks off is a failure like a broken relay.
 */
export function holdBody(
  source: RelaySource,
  maxBytes: number,
  /** Whether a chunk completed what is held (an SSE answer's response event): reading stops there. */
  endsAt?: ((chunk: Buffer) => boolean) | null,
): Promise<Held | { kind: "failure"; failure: Failure }> {
  return new Promise((resolve) => {
    let chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const whole = (): Held => ({
      kind: "held",
      body: chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size),
      whole: true,
    });
    const finish = (v: Held | { kind: "failure"; failure: Failure }) => {
      if (done) return;
      done = true;
      chunks = [];
      resolve(v);
    };
    source.relayTo({
      data(chunk) {
        if (done) return true;
        size += chunk.length;
        if (size > maxBytes) {
          finish({ kind: "held", body: null, whole: false });
          source.abandon();
          return true;
        }
        chunks.push(chunk);
        if (endsAt?.(chunk)) {
          finish(whole());
          source.abandon();
        }
        return true;
      },
      end: () => finish(whole()),
      error: (e) =>
        finish({ kind: "failure", failure: classifyFailure(e) === "timeout" ? "timeout" : "unreachable" }),
    });
  });
}
