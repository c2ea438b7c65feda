import { unavailable } from "@gw/core";
import type { AppEnv } from "@gw/http";
import { recordProxyCall } from "@gw/telemetry";
import { forwardableHeaders } from "@gw/upstream";
import type { Hono } from "hono";
import type { ProxyDeps } from "../deps.ts";
import { type Admitted, admitCall, gatewayHeaders } from "../pipeline.ts";

/**
 * POST /v1/proxy/{id}: steps 1–8 (the `pending` record is durable before the answer), then step 9
 * here: enqueue the job and answer 202 at once. The worker makes the upstream call.
 */
export function registerTransact(app: Hono<AppEnv>, deps: ProxyDeps) {
  app.post("/v1/proxy/:id", async (c) => {
    const call = await admitCall(c, deps, "transactional");
    await enqueue(call, deps, c.var.log);
    recordProxyCall({ mode: "transactional", outcome: "accepted", errorClass: "none" });
    return c.json({ invocation_id: call.invocationId }, 202, gatewayHeaders(call));
  });
}

async function enqueue(call: Admitted, deps: ProxyDeps, log: ProxyDeps["logger"]): Promise<void> {
  try {
    await deps.jobs.queue.enqueue({
      invocationId: call.invocationId,
      tenantId: call.tenantId,
      agentId: call.agent.id,
      upstreamUrl: call.agent.upstreamUrl as string,
      credentialRef: call.agent.credentialRef,
      protocol: call.agent.protocol,
      mcpMethod: call.mcp?.method ?? null,
      mcpRequestId: call.mcp?.kind === "request" ? call.mcp.id : null,
      captureBodies: call.agent.captureBodies,
      emitReceipts: call.agent.emitReceipts,
      headers: forwardableHeaders(call.rawHeaders, { keepContentLength: false }),
      clientAddress: call.clientAddress,
      body: (call.forward ?? Buffer.alloc(0)).toString("base64"),
      ...(call.payment ? { payment: call.payment } : {}),
    });
  } catch (e) {
    log.error(
      { invocation_id: call.invocationId, err: e instanceof Error ? e.name : "error" },
      "enqueue failed",
    );
    // The caller is told to try again: this call must never run later.
    await deps.invocations.fail(
      { tenantId: call.tenantId, id: call.invocationId, agentId: call.agent.id },
      "internal",
    );
    throw unavailable("the gateway cannot accept calls right now; try again");
  }
}
