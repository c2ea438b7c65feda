import { notFound } from "@gw/core";
import type { AgentCards } from "@gw/forward";
import type { AppEnv } from "@gw/http";
import { bearerOf } from "@gw/vault";
import type { Hono } from "hono";
import type { ProxyDeps } from "../deps.ts";

/**
 * GET /v1/proxy/{id}/.well-known/agent-card.json: an A2A agent's card as the gateway serves it
 * (docs/a2a.md), so that an A2A client pointed at `/v1/proxy/{id}` finds the gateway's own
 * JSON-RPC interface. The agent is read through the proxy's agent cache, in the caller's tenant.
 */
export function registerAgentCard(app: Hono<AppEnv>, deps: ProxyDeps, cards: AgentCards) {
  app.get("/v1/proxy/:id/.well-known/agent-card.json", async (c) => {
    const cached = await deps.agents(c.var.principal.tenantId, c.req.param("id"));
    if (!cached) throw notFound("agent");
    const card = await cards.card(cached.row, {
      version: c.req.header("a2a-version"),
      subjectToken: bearerOf(c.req.header("authorization")),
    });
    return c.json(card);
  });
}
