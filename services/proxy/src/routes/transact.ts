import { LIMITS, newId, unavailable } from "@gw/core";
import { type AppEnv, readNodeBodyCapped } from "@gw/http";
import { parseMcpRequest } from "@gw/mcp";
import { proxyCalls } from "@gw/telemetry";
import { forwardableHeaders } from "@gw/upstream";
import type { Hono } from "hono";
import { admit } from "../admission.ts";
import type { ProxyDeps } from "../deps.ts";

/**
 * POST /v1/proxy/{id}: admit, read the body (32 MiB cap), create the invocation `pending`,
 * enqueue the job and answer 202 at once. The worker makes the upstream call.
 */
export function registerTransact(app: Hono<AppEnv>, deps: ProxyDeps) {
  app.post("/v1/proxy/:id", async (c) => {
    const adm = await admit(c, deps);
    const incoming = c.env.incoming;
    const body = await readNodeBodyCapped(incoming, LIMITS.transactMaxBodyBytes);
    const mcp = adm.agent.protocol === "mcp" ? parseMcpRequest(body) : null;

    // seam: verifier, policy, x402 — steps 5–7 decide here, before any invocation exists.

    const invocationId = newId("inv");
    // The spec promises a durable record before the 202: this insert waits for the commit.
    await deps.durableInvocations.insert(adm.tenantId, {
      id: invocationId,
      agentId: adm.agent.id,
      mode: "transactional",
      status: "pending",
      model: adm.model,
      mcpMethod: mcp?.method ?? null,
      mcpTool: mcp?.tool ?? null,
      reqSize: body.length,
    });
    try {
      await deps.jobs.queue.enqueue({
        invocationId,
        tenantId: adm.tenantId,
        agentId: adm.agent.id,
        upstreamUrl: adm.agent.upstreamUrl as string,
        credentialRef: adm.agent.credentialRef,
        protocol: adm.agent.protocol,
        mcpMethod: mcp?.method ?? null,
        mcpRequestId: mcp?.kind === "request" ? mcp.id : null,
        captureBodies: adm.agent.captureBodies,
        headers: forwardableHeaders(incoming.rawHeaders, { keepContentLength: false }),
        body: body.toString("base64"),
      });
    } catch (e) {
      c.var.log.error(
        { invocation_id: invocationId, err: e instanceof Error ? e.message : "error" },
        "enqueue failed",
      );
      await deps.invocations.update(adm.tenantId, invocationId, {
        status: "failed",
        errorClass: "internal",
        completedAt: new Date(),
      });
      throw unavailable("the gateway cannot accept calls right now; try again");
    }
    proxyCalls.add(1, { mode: "transactional", outcome: "accepted" });
    c.header("X-Gateway-Invocation-ID", invocationId);
    return c.json({ invocation_id: invocationId }, 202);
  });
}
