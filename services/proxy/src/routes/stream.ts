import type { IncomingMessage } from "node:http";
import { DomainError, LIMITS } from "@gw/core";
import type { AppEnv } from "@gw/http";
import { ERROR_CLASS, type Facts, type Failure, outcomeOfStatus } from "@gw/invocations";
import { isRetryableMcpMethod } from "@gw/mcp";
import { createDigest, type Digest } from "@gw/receipts";
import { recordProxyCall, recordUpstreamDuration } from "@gw/telemetry";
import { type OneShotBody, openUpstream, upstreamRequestHeaders } from "@gw/upstream";
import { redactSecret } from "@gw/vault";
import { RESPONSE_ALREADY_SENT } from "@hono/node-server/utils/response";
import type { Context, Hono } from "hono";
import type { Call } from "../call.ts";
import { Capture } from "../capture.ts";
import { credentialFor } from "../credential.ts";
import type { ProxyDeps } from "../deps.ts";
import { settle } from "../payment.ts";
import { type Admitted, admitCall, gatewayHeaders } from "../pipeline.ts";
import { type Relayed, relay } from "../relay.ts";

/**
 * POST /v1/proxy/{id}/stream (and GET/DELETE for MCP agents): steps 1–8, then step 9 here: open
 * the upstream, stream both bodies verbatim with backpressure (hashing them for the receipt when
 * one is emitted), record the outcome when the stream ends. Failures before the upstream answered are DomainErrors (502, 504) through the one error
 * map, carrying the invocation id.
 */
export function registerStream(app: Hono<AppEnv>, deps: ProxyDeps) {
  const handler = async (c: Context<AppEnv>) => {
    const call = await admitCall(c, deps, "streaming");
    await forward(c, call, deps);
    return RESPONSE_ALREADY_SENT;
  };
  app.post("/v1/proxy/:id/stream", handler);
  app.get("/v1/proxy/:id/stream", handler);
  app.delete("/v1/proxy/:id/stream", handler);
}

async function forward(c: Context<AppEnv>, call: Admitted, deps: ProxyDeps): Promise<void> {
  const { incoming, outgoing } = c.env;
  const { config } = deps;
  const t0 = performance.now();
  const capture = call.agent.captureBodies;
  const reqCapture = capture ? new Capture(LIMITS.capturedBodyMaxBytes) : null;
  const respCapture = capture ? new Capture(LIMITS.capturedBodyMaxBytes) : null;
  if (call.forward) reqCapture?.add(call.forward);
  // Receipts attest the bytes forwarded each way: hashed as they pass, only when one will be signed.
  const hashing = deps.features.receipts && call.agent.emitReceipts !== false;
  const reqDigest = hashing ? createDigest() : null;
  const respDigest = hashing ? createDigest() : null;
  if (call.forward) reqDigest?.update(call.forward);
  const upload =
    call.forward === null && call.method === "POST" ? uploadOf(incoming, reqCapture, reqDigest) : null;
  const digests = () =>
    reqDigest && respDigest ? { digests: { request: reqDigest.value(), response: respDigest.value() } } : {};

  // The record: the stream's facts once it ended, written after the invocation row (step 8).
  const record = (
    end: (facts: Facts, extras: ReturnType<typeof digests>) => Promise<void>,
    relayed?: Relayed,
    paid: Facts = {},
  ) => {
    const latencyMs = Math.round(performance.now() - t0);
    recordUpstreamDuration(latencyMs, { mode: "streaming" });
    const facts = {
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
            respBody: Buffer.from(redactSecret(respCapture.bytes(), secret)),
          }
        : {}),
    };
    // The access-log line of a streaming call (the base app's is skipped: the handler answered).
    c.var.log.info(
      {
        method: call.method,
        path: c.req.path,
        status: outgoing.statusCode,
        invocation_id: call.invocationId,
        ms: latencyMs,
      },
      "request",
    );
    deps.inflight.track(
      end(facts, relayed ? digests() : {}).catch((e: unknown) => {
        c.var.log.error(
          { invocation_id: call.invocationId, err: e instanceof Error ? e.name : "error" },
          "could not record stream outcome",
        );
      }),
    );
  };
  // Step 9's settle: its outcome rides on whatever the record says in the end.
  let payment = settle.notForwarded(call.payment);
  const fail = (failure: Failure, relayed?: Relayed) => {
    recordProxyCall({ mode: "streaming", outcome: "failed", errorClass: ERROR_CLASS[failure] });
    record((facts, extras) => call.record.fail(failure, facts, extras), relayed, payment.facts(false));
  };

  const credential = await credentialFor(call, deps, c.var.log);
  if (credential === "refused") {
    fail("credential");
    drain(incoming);
    throw upstreamError(call, "credential");
  }
  const secret = credential?.secret ?? "";
  // Settlement completes before the upstream is dialled; a failed one never reaches it.
  payment = await settle.call(call, deps);
  if (!payment.forward) {
    recordProxyCall({ mode: "streaming", outcome: "failed", errorClass: "none" });
    record((facts) => call.record.failUnsettled(facts), undefined, payment.facts(false));
    drain(incoming);
    throw new DomainError("payment_required", "settlement failed", { headers: gatewayHeaders(call) });
  }
  const ac = new AbortController();
  // A caller that goes away before the answer ended cancels the upstream call (only then: an
  // abort after a clean finish would cost an exception and an event per call).
  outgoing.once("close", () => {
    if (!outgoing.writableFinished) ac.abort();
  });
  const opened = await openUpstream({
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
    signal: ac.signal,
    headersTimeout: config.GW_STREAM_FIRST_BYTE_TIMEOUT_MS,
    bodyTimeout: config.GW_STREAM_IDLE_TIMEOUT_MS,
  });
  if (opened.kind === "failure") {
    const failure = ac.signal.aborted ? "cancelled" : opened.failure;
    fail(failure);
    drain(incoming);
    throw upstreamError(call, failure);
  }

  const own = { ...gatewayHeaders(call), "x-request-id": c.var.requestId };
  const relayed = await relay(opened.res, outgoing, own, {
    t0,
    capture: respCapture,
    secret,
    digest: respDigest,
  });
  // A standalone GET stream is ended by the client: that is its normal end, not a cancellation.
  const closedNormally = relayed.ended === "client_closed" && call.method === "GET";
  if (relayed.ended === "end" || closedNormally) {
    const { status, errorClass } = outcomeOfStatus(relayed.upstreamStatus);
    recordProxyCall({ mode: "streaming", outcome: status, errorClass: errorClass ?? "none" });
    record(
      (facts, extras) => call.record.complete(relayed.upstreamStatus, facts, extras),
      relayed,
      payment.facts(status === "succeeded"),
    );
    return;
  }
  fail(relayed.failure ?? "unreachable", relayed);
}

/** The caller's body as a one-shot stream, counted and teed into the capture as it goes up. */
function uploadOf(
  incoming: IncomingMessage,
  capture: Capture | null,
  digest: Digest | null,
): OneShotBody & { size: () => number } {
  let size = 0;
  let touched = false;
  return {
    touched: () => touched,
    size: () => size,
    stream: async function* () {
      touched = true;
      for await (const chunk of incoming) {
        size += (chunk as Buffer).length;
        capture?.add(chunk as Buffer);
        digest?.update(chunk as Buffer);
        yield chunk as Buffer;
      }
    },
  };
}

/** The caller may still be sending: let Node drain the rest so the error reaches them. */
function drain(incoming: IncomingMessage) {
  if (!incoming.complete) incoming.resume();
}

const ANSWERS: Record<Failure, [kind: "bad_gateway" | "gateway_timeout", message: string]> = {
  timeout: ["gateway_timeout", "upstream timed out"],
  ssrf_blocked: ["bad_gateway", "upstream address is not allowed"],
  credential: ["bad_gateway", "the agent's upstream credential could not be used"],
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
