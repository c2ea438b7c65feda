import type { ServerResponse } from "node:http";
import type { Failure } from "@gw/invocations";
import type { Digest } from "@gw/receipts";
import { classifyFailure, downstreamResponseHeaders } from "@gw/upstream";
import { redactHeaders } from "@gw/vault";
import type { Dispatcher } from "undici";
import type { Capture } from "./capture.ts";
import type { Answer } from "./hooks.ts";

/** How a relayed answer ended, with what was delivered. */
export type Relayed = {
  upstreamStatus: number;
  ttftMs: number | null;
  respSize: number;
  /** `end`: delivered whole; `client_closed`: the caller went away; `broken`: the upstream broke off. */
  ended: "end" | "client_closed" | "broken";
  failure: Failure | null;
};

/**
 * Streams an upstream answer to the caller verbatim with backpressure (an SSE stream event by
 * event): the head with the gateway's own headers, then every chunk as it arrives, pausing the
 * upstream while the caller is slow. Counts what was delivered (time to first byte, size), tees
 * the first bytes into `capture`, hashes every byte into `digest` (receipts), and never buffers
 * the stream. The body itself is relayed verbatim.
 */
export function relay(
  res: Dispatcher.ResponseData,
  /** The answer's head as the answer hooks left it. */
  head: Answer,
  outgoing: ServerResponse,
  own: Record<string, string>,
  opts: { t0: number; capture: Capture | null; secret: string; digest?: Digest | null },
): Promise<Relayed> {
  const upstreamStatus = head.status;
  // Response headers that reflect the injected credential carry [REDACTED] instead.
  const headers = redactHeaders(downstreamResponseHeaders(head.headers), opts.secret);
  outgoing.writeHead(upstreamStatus, { ...headers, ...own });
  // A body of known length follows at once: its headers leave with its first bytes, in one write.
  // A stream (SSE, chunked) may wait long for its first event: its headers go now.
  if (head.headers["content-length"] === undefined) outgoing.flushHeaders();
  let ttftMs: number | null = null;
  let respSize = 0;
  const up = res.body;
  return new Promise((resolve) => {
    let settled = false;
    const done = (ended: Relayed["ended"], failure: Failure | null) => {
      if (settled) return;
      settled = true;
      resolve({ upstreamStatus, ttftMs, respSize, ended, failure });
    };
    up.on("data", (chunk: Buffer) => {
      if (ttftMs === null) ttftMs = Math.round(performance.now() - opts.t0);
      respSize += chunk.length;
      opts.capture?.add(chunk);
      opts.digest?.update(chunk);
      if (!outgoing.write(chunk)) up.pause();
    });
    outgoing.on("drain", () => up.resume());
    up.once("end", () => outgoing.end(() => done("end", null)));
    up.once("error", (e) => {
      if (settled) return;
      // Headers are out: the only honest signal left to the caller is an aborted response.
      outgoing.destroy();
      done("broken", classifyFailure(e) === "timeout" ? "timeout" : "unreachable");
    });
    outgoing.once("close", () => {
      if (outgoing.writableFinished) return;
      up.destroy();
      done("client_closed", "cancelled");
    });
  });
}
