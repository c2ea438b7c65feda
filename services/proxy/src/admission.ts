import { DomainError, invalid, LIMITS, notFound } from "@gw/core";
import type { AgentRow } from "@gw/db";
import type { AppEnv } from "@gw/http";
import { rateLimitedError } from "@gw/ratelimit";
import type { Target } from "@gw/upstream";
import type { Context } from "hono";
import type { ProxyDeps } from "./deps.ts";

/** What the admission steps established about a call that may go ahead. */
export type Admitted = {
  agent: AgentRow;
  target: Target;
  tenantId: string;
  model: string | null;
  mcpMethod: string | null;
  mcpTool: string | null;
};

/**
 * Pipeline steps 2–4 of DESIGN.md §1, shared by both proxy modes; each is cheap and fails fast,
 * and none creates an invocation. Steps 5–7 (MCP, policy, x402) hook in after the body is known.
 */
export async function admit(
  c: Context<AppEnv>,
  deps: ProxyDeps,
): Promise<Omit<Admitted, "mcpMethod" | "mcpTool">> {
  const tenantId = c.var.principal.tenantId;
  // 2. The agent, in the caller's tenant.
  const cached = await deps.agents(tenantId, c.req.param("id") ?? "");
  if (!cached) throw notFound("agent");
  const { row, target } = cached;
  if (row.status !== "active") throw new DomainError("unprocessable", "agent is inactive");
  if (row.suspended) throw new DomainError("unprocessable", "agent is suspended");
  if (!target) throw new DomainError("unprocessable", "agent has no upstream_url");

  // 3. The agent's token bucket (its rate_limit, else the deployment default): 429 with Retry-After.
  const limit = row.rateLimit ?? {
    rps: deps.config.GW_RATE_LIMIT_RPS,
    burst: deps.config.GW_RATE_LIMIT_BURST,
  };
  const taken = await deps.rateLimiter.take({ tenantId, agentId: row.id }, limit);
  if (!taken.allowed) throw rateLimitedError(taken.retryAfterSeconds);

  // 4. The model header.
  const model = c.env.incoming.headers["x-gateway-model"];
  const modelValue = Array.isArray(model) ? model.join(",") : (model ?? null);
  if (modelValue !== null && Buffer.byteLength(modelValue) > LIMITS.modelHeaderMaxBytes) {
    throw invalid(`X-Gateway-Model must be at most ${LIMITS.modelHeaderMaxBytes} bytes`);
  }
  return { agent: row, target, tenantId, model: modelValue };
}
