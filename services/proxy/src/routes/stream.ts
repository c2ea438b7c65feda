import type { IncomingMessage } from "node:http";
import { DomainError } from "@gw/core";
import { ERROR_CLASS, type Failure, outcomeOfStatus } from "@gw/invocations";
import { isRetryableMcpMethod } from "@gw/mcp";
import { recordAddedDuration, recordProxyCall } from "@gw/telemetry";
import { Cancel, type OneShotBody, openUpstream, upstreamRequestHeaders } from "@gw/upstream";
import type { InjectedHeader } from "@gw/vault";
import type { Call } from "../call.ts";
import { credentialFor } from "../credential.ts";
import type { ProxyDeps } from "../deps.ts";
import type { ProxyExchange } from "../direct.ts";
import { settle } from "../payment.ts";
import { type Admitted, admitCall, gatewayHeaders } from "../pipeline.ts";
import { type Relayed, relay } from "../relay.ts";
import { tapCall } from "../tap.ts";

/**
 * POST /v1/proxy/{id}/stream (and GET/DELETE for MCP agents; routed by direct.ts): steps 1–8,
 * then step 9 here: open the upstream, stream both bodies verbatim with backpressure (hashing them
 * for the receipt when one is emitted), record the outcome when the stream ends. Failures before
 * the upstream answered are DomainErrors (502, 504) through the one error map, carrying the
 * invocation id.
 */
export async function streamCall(x: ProxyExchange, deps: ProxyDeps): Promise<void> {
  const start = performance.now();
  const call = await admitCall(x, deps, "streaming");
  x.fields.invocation_id = call.invocationId;
  await forward(x, call, deps, start);
}

async function forward(x: ProxyExchange, call: Admitted, deps: ProxyDeps, start: number): Promise<void> {
  const { incoming, outgoing } = x;
  const t0 = performance.now();
  const tap = tapCall(x, call, deps, t0);
  // Step 9's settle: its outcome rides on whatever the record says in the end.
  let payment = settle.notForwarded(call.payment);
  const fail = (failure: Failure, relayed?: Relayed) => {
    recordProxyCall({ mode: "streaming", outcome: "failed", errorClass: ERROR_CLASS[failure] });
    tap.record((facts, extras) => call.record.fail(failure, facts, extras), relayed, payment.facts(false));
  };

  const credential = await credentialFor(call, deps, x);
  if (credential === "refused") {
    fail("credential");
    drain(incoming);
    throw upstreamError(call, "credential");
  }
  tap.secret = credential?.secret ?? "";
  // Settlement completes before the upstream is dialled; a failed one never reaches it.
  payment = await settle.call(call, deps);
  if (!payment.forward) {
    recordProxyCall({ mode: "streaming", outcome: "failed", errorClass: "none" });
    tap.record((facts) => call.record.failUnsettled(facts), undefined, payment.facts(false));
    drain(incoming);
    throw new DomainError("payment_required", "settlement failed", { headers: gatewayHeaders(call) });
  }
  const cancel = new Cancel();
  // A caller that goes away before the answer ended cancels the upstream call (only then: an
  // abort after a clean finish would cost an exception and an event per call).
  outgoing.once("close", () => {
    if (!outgoing.writableFinished) cancel.abort();
  });
  // What the gateway adds to a streaming call: everything before the upstream is dialled.
  recordAddedDuration(performance.now() - start, { mode: "streaming" });
  const opened = await dial(call, deps, credential, tap.upload, cancel);
  if (opened.kind === "failure") {
    const failure = cancel.aborted ? "cancelled" : opened.failure;
    fail(failure);
    drain(incoming);
    throw upstreamError(call, failure);
  }

  const own = { ...gatewayHeaders(call), "x-request-id": x.requestId };
  const relayed = await relay(opened.res, outgoing, own, {
    t0,
    capture: tap.respCapture,
    secret: tap.secret,
    digest: tap.respDigest,
  });
  // A standalone GET stream is ended by the client: that is its normal end, not a cancellation.
  const closedNormally = relayed.ended === "client_closed" && call.method === "GET";
  if (relayed.ended === "end" || closedNormally) {
    const { status, errorClass } = outcomeOfStatus(relayed.upstreamStatus);
    recordProxyCall({ mode: "streaming", outcome: status, errorClass: errorClass ?? "none" });
    tap.record(
      (facts, extras) => call.record.complete(relayed.upstreamStatus, facts, extras),
      relayed,
      payment.facts(status === "succeeded"),
    );
    return;
  }
  fail(relayed.failure ?? "unreachable", relayed);
}

/** Opens the upstream with the shared retry policy and the streaming time-outs. */
function dial(
  call: Admitted,
  deps: ProxyDeps,
  credential: InjectedHeader | undefined,
  upload: OneShotBody | null,
  signal: Cancel,
) {
  const { config } = deps;
  return openUpstream({
    dispatcher: deps.dispatcher,
    target: call.target,
    method: call.method,
    headers: upstreamRequestHeaders(call.rawHeaders, {
      invocationId: call.invocationId,
      agentId: call.agent.id,
      tenantId: call.tenantId,
      // A streamed body keeps the caller's framing; a held one gets its own from undici.
      keepContentLength: upload !== null,
      credential,
      clientAddress: call.clientAddress,
    }),
    body: call.forward ?? upload,
    retry: {
      retries: config.GW_UPSTREAM_RETRIES,
      baseMs: config.GW_RETRY_BASE_MS,
      retryable: call.agent.protocol === "http" || isRetryableMcpMethod(call.mcp?.method ?? null),
    },
    signal,
    headersTimeout: config.GW_STREAM_FIRST_BYTE_TIMEOUT_MS,
    bodyTimeout: config.GW_STREAM_IDLE_TIMEOUT_MS,
  });
}

/** The caller may still be sending: let Node drain the rest so the error reaches them. */
function drain(incoming: IncomingMessage) {
  if (!incoming.complete) incoming.resume();
}

const ANSWERS: Record<Failure, [kind: "bad_gateway" | "gateway_timeout", message: string]> = {
  timeout: ["gateway_timeout", "upstream timed out"],
  ssrf_blocked: ["bad_gateway", "upstream address is not allowed"],
  credential: ["bad_gateway", "upstream credential unavailable"],
  internal: ["bad_gateway", "upstream call failed"],
  unreachable: ["bad_gateway", "upstream unreachable"],
  cancelled: ["bad_gateway", "upstream call cancelled"],
  no_response: ["bad_gateway", "upstream call failed"],
  too_large: ["bad_gateway", "upstream call failed"],
};

/** 502 unreachable/refused, 504 time-out (DESIGN.md §1 step 9), with the invocation id. */
function upstreamError(call: Call, failure: Failure): DomainError {
  const [kind, message] = ANSWERS[failure];
  return new DomainError(kind, message, { headers: gatewayHeaders(call) });
}
