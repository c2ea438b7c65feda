import {
  type Cancel,
  callUpstreamStreaming,
  type OneShotBody,
  type OpenAnswer,
  openStream,
  type Target,
  upstreamRequestHeaders,
} from "@gw/upstream";
import type { InjectedHeader } from "@gw/vault";
import type { ForwardCall } from "./call.ts";
import type { ForwardDeps } from "./deps.ts";

function headersFor(call: ForwardCall, credential: InjectedHeader | undefined, keepContentLength: boolean) {
  return upstreamRequestHeaders(call.headers, {
    invocationId: call.invocationId,
    agentId: call.agentId,
    tenantId: call.tenantId,
    keepContentLength,
    credential,
    clientAddress: call.clientAddress,
  });
}

function retryOf(call: ForwardCall, deps: ForwardDeps) {
  return {
    retries: deps.config.GW_UPSTREAM_RETRIES,
    baseMs: deps.config.GW_RETRY_BASE_MS,
    // Transient failures are retried only where the protocol allows it for this method.
    retryable: call.speaks.retryable(call.rpcMethod),
  };
}

/**
 * A relayed call's dial: the streaming time-outs (first byte, then idle between chunks) and a
 * one-shot upload retried only while none of it was sent; the caller going away cancels it.
 */
export function dialStream(
  call: ForwardCall,
  target: Target,
  credential: InjectedHeader | undefined,
  body: Buffer | OneShotBody | null,
  signal: Cancel,
  deps: ForwardDeps,
) {
  return openStream({
    dispatcher: deps.dispatcher,
    target,
    method: call.method,
    // A streamed body keeps the caller's framing; a held one gets its own from undici.
    headers: headersFor(call, credential, body !== null && !Buffer.isBuffer(body)),
    body,
    retry: retryOf(call, deps),
    signal,
    headersTimeout: deps.config.GW_STREAM_FIRST_BYTE_TIMEOUT_MS,
    bodyTimeout: deps.config.GW_STREAM_IDLE_TIMEOUT_MS,
  });
}

/** A collected call's dial: one deadline for every attempt, the back-off and the body read. */
export function dialCollect<T>(
  call: ForwardCall,
  target: Target,
  credential: InjectedHeader | undefined,
  body: Buffer,
  read: (answer: OpenAnswer) => Promise<T>,
  deps: ForwardDeps,
) {
  return callUpstreamStreaming(
    {
      dispatcher: deps.dispatcher,
      target,
      headers: headersFor(call, credential, false),
      body,
      retry: retryOf(call, deps),
      timeoutMs: deps.config.GW_TRANSACT_TIMEOUT_MS,
    },
    read,
  );
}
