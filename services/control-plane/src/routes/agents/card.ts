import { getAgent } from "@gw/agents";
import type { AgentCards } from "@gw/forward";
import type { AppEnv } from "@gw/http";
import { bearerOf } from "@gw/vault";
import type { Hono } from "hono";
import { type AgentRouteDeps, agentsCtx } from "./ctx.ts";

/**
 * GET /v1/agents/{id}/card: the card the gateway serves for an A2A agent (docs/a2a.md), the same
 * as at `/v1/proxy/{id}/.well-known/agent-card.json`. The caller's `A2A-Version` picks the card's
 * shape, as the upstream answers it; a token-exchange credential exchanges the caller's token.
 */
export function registerAgentCard(app: Hono<AppEnv>, deps: AgentRouteDeps, cards: AgentCards) {
  app.get("/agents/:id/card", async (c) => {
    const row = await getAgent({ ctx: agentsCtx(c, deps), id: c.req.param("id") });
    const card = await cards.card(row, {
      version: c.req.header("a2a-version"),
      subjectToken: bearerOf(c.req.header("authorization")),
    });
    return c.json(card);
  });
}
