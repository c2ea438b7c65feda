import type { Readable } from "node:stream";
import type { Failure } from "@gw/invocations";
import { classifyFailure } from "@gw/upstream";

/** A held answer body: whole within the bound, or abandoned past it. */
export type Held = { kind: "held"; body: Buffer; whole: true } | { kind: "held"; body: null; whole: false };

/**
 * Reads an answer body that a feature holds before the caller sees it (a `tools/list` answer to
 * filter, a guarded result), up to `maxBytes` (or until `endsAt` says it is complete): past it the upstream is abandoned and nothing is kept. The stream's
 * idle time-out still applies; an upstream that breaks off is a failure like a broken relay.
 */
export function holdBody(
  body: Readable,
  maxBytes: number,
  /** Whether a chunk completed what is held (an SSE answer's response event): reading stops there. */
  endsAt?: ((chunk: Buffer) => boolean) | null,
): Promise<Held | { kind: "failure"; failure: Failure }> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (v: Held | { kind: "failure"; failure: Failure }) => {
      if (done) return;
      done = true;
      resolve(v);
    };
    body.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        chunks.length = 0;
        finish({ kind: "held", body: null, whole: false });
        body.destroy();
        return;
      }
      chunks.push(chunk);
      if (endsAt?.(chunk)) {
        finish({ kind: "held", body: Buffer.concat(chunks), whole: true });
        body.destroy();
      }
    });
    body.once("end", () => finish({ kind: "held", body: Buffer.concat(chunks), whole: true }));
    body.once("error", (e) =>
      finish({ kind: "failure", failure: classifyFailure(e) === "timeout" ? "timeout" : "unreachable" }),
    );
  });
}
