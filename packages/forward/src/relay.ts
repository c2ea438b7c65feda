import type { ServerResponse } from "node:http";
import type { Failure } from "@gw/invocations";
import type { Digest } from "@gw/receipts";
import { type BodySink, classifyFailure, downstreamResponseHeaders, type RelaySource } from "@gw/upstream";
import { redactSecretText } from "@gw/vault";
import type { AnswerPlan } from "./answer/hooks.ts";
import type { Capture } from "./capture.ts";
import type { Answer, AnswerLearner } from "./protocols/index.ts";

/** How a relayed answer ended, with what was delivered. */
export type Relayed = {
  /** The status the caller was answered with (it decides the outcome). */
  status: number;
  /** The upstream's status; null when the gateway answered itself (a virtual server's own answer). */
  upstreamStatus: number | null;
  ttftMs: number | null;
  respSize: number;
  /** `end`: delivered whole; `client_closed`: the caller went away; `broken`: the upstream broke off. */
  ended: "end" | "client_closed" | "broken";
  failure: Failure | null;
};

/** What a relay feeds as the body passes (besides the caller), and the injected secret it masks. */
type RelayOpts = {
  t0: number;
  capture: Capture | null;
  secret: string;
  digest?: Digest | null;
  /** An answer hook's tee (a `tools/list` answer the catalog learns from). */
  tee?: AnswerPlan | null;
  /** The protocol's learner (A2A), fed each chunk once it was written to the caller. */
  learn?: AnswerLearner | null;
};

/**
 * Streams an upstream answer to the caller verbatim with backpressure (an SSE stream event by
 * event): the head with the gateway's own headers, then every chunk as it arrives, pausing the
 * upstream while the caller is slow. Counts what was delivered (time to first byte, size), tees
 * the first bytes into `capture`, hashes every byte into `digest` (receipts), and never buffers
 * the stream. The body itself is relayed verbatim.
 */
export function relay(
  res: RelaySource,
  /** The answer's head as the answer hooks left it. */
  head: Answer,
  outgoing: ServerResponse,
  own: Record<string, string>,
  opts: RelayOpts,
): Promise<Relayed> {
  const upstreamStatus = head.status;
  // A held answer (read and reshaped by an answer hook) is delivered whole, with its own length.
  if (head.body !== null) return deliverHeld(head, outgoing, own, opts);
  outgoing.writeHead(upstreamStatus, headerList(head, null, own, opts.secret));
  // A body of known length follows at once: its headers leave with its first bytes, in one write.
  // A stream (SSE, chunked) may wait long for its first event: its headers go now.
  if (head.headers["content-length"] === undefined) outgoing.flushHeaders();
  return new Promise((resolve) => res.relayTo(new Relaying(res, outgoing, upstreamStatus, opts, resolve)));
}

/**
 * One relayed body, fed by undici's parser chunk by chunk (`BodySink`): written to the caller as
 * it comes, the upstream read paused while the caller's socket is full. One object per call: its
 * methods are the sink, its fields what was delivered.
 */
class Relaying implements BodySink {
  ttftMs: number | null = null;
  respSize = 0;
  settled = false;

  constructor(
    private readonly res: RelaySource,
    private readonly outgoing: ServerResponse,
    private readonly upstreamStatus: number,
    private readonly opts: RelayOpts,
    private readonly resolve: (r: Relayed) => void,
  ) {
    outgoing.on("close", () => {
      if (outgoing.writableFinished) return;
      this.done("client_closed", "cancelled");
      res.abandon();
    });
  }

  data(chunk: Buffer): boolean {
    const { opts, outgoing } = this;
    if (this.ttftMs === null) this.ttftMs = Math.round(performance.now() - opts.t0);
    this.respSize += chunk.length;
    opts.capture?.add(chunk);
    opts.digest?.update(chunk);
    opts.tee?.add(chunk);
    const room = outgoing.write(chunk);
    // The caller is slow: the upstream read waits for its socket to drain.
    if (!room) outgoing.once("drain", () => this.res.resume());
    opts.learn?.add(chunk);
    return room;
  }

  end(): void {
    this.outgoing.end(() => this.done("end", null));
  }

  error(e: Error): void {
    if (this.settled) return;
    // The caller went away first (its close cancelled the call): not the upstream's fault.
    if (this.outgoing.destroyed) {
      this.done("client_closed", "cancelled");
      return;
    }
    // Headers are out: the only honest signal left to the caller is an aborted response.
    this.outgoing.destroy();
    this.done("broken", classifyFailure(e) === "timeout" ? "timeout" : "unreachable");
  }

  done(ended: Relayed["ended"], failure: Failure | null): void {
    if (this.settled) return;
    this.settled = true;
    const { upstreamStatus, ttftMs, respSize } = this;
    this.resolve({ status: upstreamStatus, upstreamStatus, ttftMs, respSize, ended, failure });
  }
}

/**
 * The caller's response head as one flat list: the upstream's headers that pass (see
 * `downstreamResponseHeaders`), those reflecting the injected credential with [REDACTED] instead,
 * then a held body's own length, then the gateway's own headers.
 */
function headerList(
  head: Answer,
  length: number | null,
  own: Record<string, string>,
  secret: string,
): string[] {
  const list = downstreamResponseHeaders(
    head.headers,
    secret === "" ? same : (v) => redactSecretText(v, secret),
    length === null ? undefined : "content-length",
  );
  if (length !== null) list.push("content-length", String(length));
  for (const name in own) list.push(name, own[name] as string);
  return list;
}

const same = (v: string) => v;

function deliverHeld(
  head: Answer,
  outgoing: ServerResponse,
  own: Record<string, string>,
  opts: Omit<RelayOpts, "tee">,
): Promise<Relayed> {
  const body = head.body as Buffer;
  const upstreamStatus = head.status;
  outgoing.writeHead(upstreamStatus, headerList(head, body.length, own, opts.secret));
  const ttftMs = Math.round(performance.now() - opts.t0);
  opts.capture?.add(body);
  opts.digest?.update(body);
  opts.learn?.add(body);
  return new Promise((resolve) => {
    let settled = false;
    const done = (ended: Relayed["ended"], failure: Failure | null) => {
      if (settled) return;
      settled = true;
      resolve({ status: upstreamStatus, upstreamStatus, ttftMs, respSize: body.length, ended, failure });
    };
    outgoing.once("close", () => {
      if (!outgoing.writableFinished) done("client_closed", "cancelled");
    });
    outgoing.end(body, () => done("end", null));
  });
}
