import { LIMITS } from "@gw/core";
import type { Extras, Facts } from "@gw/invocations";
import { createDigest, type Digest, digestOf } from "@gw/receipts";
import type { OneShotBody } from "@gw/upstream";
import { redactSecret } from "@gw/vault";
import type { BodySource, ForwardCall } from "./call.ts";
import { Capture } from "./capture.ts";
import type { AnswerLearner } from "./protocols/index.ts";
import type { Relayed } from "./relay.ts";
import { uploadOf } from "./upload.ts";

const NO_EXTRAS: Extras = Object.freeze({});

/**
 * The one tap both modes run their bodies through, without holding a stream: the request size,
 * the first LIMITS.capturedBodyMaxBytes of each body when the agent captures them, the sha256 of
 * each when a receipt will be signed, and the record's facts once the call ended. Stored copies
 * never hold the injected secret when the upstream reflected it (docs/credentials.md).
 */
export class Tap {
  /** The request body as held bytes (hashed and captured when the record is written). */
  readonly held: Buffer | null;
  /** The live request body, counted, teed and hashed as it goes up. */
  readonly upload: (OneShotBody & { size: () => number }) | null;
  /** A relayed answer's first bytes and digest, fed chunk by chunk by `relay`. */
  readonly respCapture: Capture | null;
  readonly respDigest: Digest | null;
  private readonly reqCapture: Capture | null;
  private readonly reqDigest: Digest | null;
  private readonly hashing: boolean;
  /** The injected credential's secret, redacted from stored copies of the answer. */
  secret = "";
  /** The member of a virtual MCP server that served the call (routed_agent_id). */
  routedAgentId: string | null = null;
  /** What the protocol learns from the answer as it passes (A2A: task, context, state); null for most. */
  learner: AnswerLearner | null = null;

  constructor(
    private readonly call: ForwardCall,
    source: BodySource,
    /** A relayed answer is tapped chunk by chunk; a collected one once, whole. */
    relaying: boolean,
    receipts: boolean,
    readonly t0: number,
  ) {
    const capture = call.captureBodies;
    // Receipts attest the bytes forwarded each way: hashed only when one will be signed.
    this.hashing = receipts && call.emitReceipts !== false;
    this.held = Buffer.isBuffer(source) ? source : null;
    const streamed = source !== null && !Buffer.isBuffer(source) ? source : null;
    this.reqCapture = capture && streamed !== null ? new Capture(LIMITS.capturedBodyMaxBytes) : null;
    this.reqDigest = this.hashing && streamed !== null ? createDigest() : null;
    this.upload = streamed !== null ? uploadOf(streamed, this.reqCapture, this.reqDigest) : null;
    this.respCapture = capture && relaying ? new Capture(LIMITS.capturedBodyMaxBytes) : null;
    this.respDigest = this.hashing && relaying ? createDigest() : null;
  }

  /** Milliseconds since the forward step began. */
  elapsed(): number {
    return Math.round(performance.now() - this.t0);
  }

  /** The facts every record of the call has: latency, request size and the captured request. */
  facts(paid: Facts): Facts {
    return this.factsInto({}, paid);
  }

  /** A relayed call's facts: what was delivered (nothing when it ended before an answer). */
  relayedFacts(relayed: Relayed | undefined, paid: Facts): Facts {
    const f = this.factsInto(
      {
        ttftMs: relayed?.ttftMs ?? null,
        respSize: relayed?.respSize ?? 0,
        upstreamStatus: relayed?.upstreamStatus ?? null,
      },
      paid,
    );
    if (this.respCapture) f.respBody = Buffer.from(redactSecret(this.respCapture.bytes(), this.secret));
    return f;
  }

  /**
   * `facts` added to `f`, field by field in the order a spread of each part would add them: one
   * object per record, where spreads made one per part (and the empty ones) on every call.
   */
  private factsInto(f: Facts, paid: Facts): Facts {
    const { held } = this;
    f.latencyMs = this.elapsed();
    f.reqSize = held?.length ?? this.upload?.size() ?? 0;
    f.completedAt = new Date();
    if (this.routedAgentId !== null) f.routedAgentId = this.routedAgentId;
    const outcome = this.call.guard?.outcome;
    if (outcome) {
      f.answerAction = outcome.action;
      f.answerFindings = outcome.findings;
    }
    if (this.learner !== null) Object.assign(f, this.learner.facts());
    Object.assign(f, paid);
    if (this.call.captureBodies) {
      f.bodyCaptured = true;
      f.reqBody = held ? capped(held) : (this.reqCapture?.bytes() ?? Buffer.alloc(0));
    }
    return f;
  }

  /**
   * A collected call's facts: the attempts, the answer's status when there was one (null: the
   * gateway's own answer, no upstream reached), and the stored (already redacted) body when it
   * completed.
   */
  collectedFacts(
    answered: { attempts: number; upstreamStatus?: number | null; body?: Buffer },
    paid: Facts,
  ): Facts {
    const { body } = answered;
    return {
      attempts: answered.attempts,
      ...this.facts(paid),
      ...(answered.upstreamStatus === undefined ? {} : { upstreamStatus: answered.upstreamStatus }),
      ...(body
        ? { respSize: body.length, ...(this.call.captureBodies ? { respBody: capped(body) } : {}) }
        : {}),
    };
  }

  /** The digests a receipt signs; `resp` is a collected answer's stored body (a relayed one was hashed as it passed). */
  digests(resp?: Buffer): Extras {
    if (!this.hashing) return NO_EXTRAS;
    const request = this.reqDigest ? this.reqDigest.value() : digestOf(this.held ?? EMPTY);
    const response = resp ? digestOf(resp) : (this.respDigest as Digest).value();
    return { digests: { request, response } };
  }
}

const EMPTY = Buffer.alloc(0);

/** The first bytes of a held body, for capture. */
function capped(body: Buffer): Buffer {
  const max = LIMITS.capturedBodyMaxBytes;
  return body.length > max ? Buffer.from(body.subarray(0, max)) : body;
}
