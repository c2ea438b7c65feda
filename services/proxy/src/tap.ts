import { LIMITS } from "@gw/core";
import type { Facts } from "@gw/invocations";
import { createDigest } from "@gw/receipts";
import { recordUpstreamDuration } from "@gw/telemetry";
import { redactSecret } from "@gw/vault";
import { Capture } from "./capture.ts";
import type { ProxyDeps } from "./deps.ts";
import type { ProxyExchange } from "./direct.ts";
import type { Admitted } from "./pipeline.ts";
import type { Relayed } from "./relay.ts";
import { uploadOf } from "./upload.ts";

type Digests = { digests?: { request: string; response: string } };
/** How the record ends: the lifecycle verb, given the facts and the digests. */
export type RecordEnd = (facts: Facts, extras: Digests) => Promise<void>;

/**
 * What a streaming call keeps as its bodies pass, without holding them: the request size, the
 * first bytes of each body when the agent captures them, the sha256 of each when a receipt will be
 * signed; and `record`, which writes the call's record once it ended (off the critical path,
 * awaited by graceful shutdown).
 */
export function tapCall(x: ProxyExchange, call: Admitted, deps: ProxyDeps, t0: number) {
  const capture = call.agent.captureBodies;
  const reqCapture = capture ? new Capture(LIMITS.capturedBodyMaxBytes) : null;
  const respCapture = capture ? new Capture(LIMITS.capturedBodyMaxBytes) : null;
  // Receipts attest the bytes forwarded each way: hashed as they pass, only when one will be signed.
  const hashing = deps.features.receipts && call.agent.emitReceipts !== false;
  const reqDigest = hashing ? createDigest() : null;
  const respDigest = hashing ? createDigest() : null;
  if (call.forward) {
    reqCapture?.add(call.forward);
    reqDigest?.update(call.forward);
  }
  const upload =
    call.forward === null && call.method === "POST" ? uploadOf(x.incoming, reqCapture, reqDigest) : null;
  const digests = (): Digests =>
    reqDigest && respDigest ? { digests: { request: reqDigest.value(), response: respDigest.value() } } : {};

  const tap = {
    upload,
    respCapture,
    respDigest,
    /** The injected credential's secret, redacted from stored copies of the answer. */
    secret: "",
    record(end: RecordEnd, relayed?: Relayed, paid: Facts = {}) {
      const latencyMs = Math.round(performance.now() - t0);
      recordUpstreamDuration(latencyMs, { mode: "streaming" });
      const facts: Facts = {
        latencyMs,
        ttftMs: relayed?.ttftMs ?? null,
        respSize: relayed?.respSize ?? 0,
        reqSize: call.forward?.length ?? upload?.size() ?? 0,
        upstreamStatus: relayed?.upstreamStatus ?? null,
        completedAt: new Date(),
        ...paid,
        // Stored copies never hold a secret the upstream reflected (DESIGN.md, Credentials).
        ...(reqCapture && respCapture
          ? {
              bodyCaptured: true,
              reqBody: reqCapture.bytes(),
              respBody: Buffer.from(redactSecret(respCapture.bytes(), tap.secret)),
            }
          : {}),
      };
      deps.inflight.track(
        end(facts, relayed ? digests() : {}).catch((e: unknown) => {
          x.log.error(
            { invocation_id: call.invocationId, err: e instanceof Error ? e.name : "error" },
            "could not record stream outcome",
          );
        }),
      );
    },
  };
  return tap;
}
