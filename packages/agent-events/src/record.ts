import { agentRepo } from "@gw/agents";
import { isId, newId, notFound } from "@gw/core";
import type { Db } from "@gw/db";
import { agentEventRepo } from "./repos/agent-events.ts";
import type { AgentEventInput, AgentEventRecordedJson } from "./schema.ts";

export type AgentEventsCtx = { db: Db; tenantId: string };

/**
 * Records one agent event for a live agent of the caller's tenant (404 otherwise, malformed ids
 * included). `duplicate` is true when the tenant already had this event_id: the first record
 * stands and nothing is written.
 */
export async function recordAgentEvent({
  ctx,
  input,
}: {
  ctx: AgentEventsCtx;
  input: AgentEventInput;
}): Promise<AgentEventRecordedJson> {
  const known =
    isId("agt", input.agent_id) &&
    (await agentRepo.exists(ctx.db, ctx.tenantId, input.agent_id, { live: true }));
  if (!known) throw notFound("agent");
  const inserted = await agentEventRepo.insert(ctx.db, ctx.tenantId, {
    id: newId("evt"),
    eventId: input.event_id,
    agentId: input.agent_id,
    type: input.type,
    sessionRef: input.session_ref,
    occurredAt: input.occurred_at,
    toolName: input.tool_name ?? null,
    outcome: input.outcome ?? null,
    durationMs: input.duration_ms ?? null,
    provider: input.provider ?? null,
    model: input.model ?? null,
    inputTokens: input.input_tokens ?? null,
    outputTokens: input.output_tokens ?? null,
    cacheReadTokens: input.cache_read_tokens ?? null,
    cacheWriteTokens: input.cache_write_tokens ?? null,
    costUsd: input.cost_usd === undefined ? null : String(input.cost_usd),
    source: input.source,
    sourceVersion: input.source_version,
  });
  return { recorded: true, duplicate: !inserted };
}
