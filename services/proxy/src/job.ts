import type { StoredJob } from "@gw/invocations";
import { forwardableHeaders } from "@gw/upstream";
import type { Call } from "./call.ts";

/**
 * The transactional job's fields, snapshotted when the call is accepted: stored with the pending
 * invocation (Postgres, the source of truth); the worker reads them when it claims the call (the
 * BullMQ job, the doorbell, carries ids only).
 */
export function storedJobOf(call: Call): StoredJob {
  return {
    invocationId: call.invocationId,
    tenantId: call.tenantId,
    agentId: call.agent.id,
    upstreamUrl: call.agent.upstreamUrl,
    ...(call.agent.members ? { virtual: { name: call.agent.name, members: call.agent.members } } : {}),
    credentialRef: call.agent.credentialRef,
    protocol: call.agent.protocol,
    mcpMethod: call.mcp?.method ?? null,
    mcpRequestId: call.mcp?.kind === "request" ? call.mcp.id : null,
    captureBodies: call.agent.captureBodies,
    emitReceipts: call.agent.emitReceipts,
    headers: forwardableHeaders(call.rawHeaders, { keepContentLength: false }),
    clientAddress: call.clientAddress,
    ...(call.payment ? { payment: call.payment } : {}),
  };
}
