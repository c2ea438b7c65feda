import { agentRepo } from "@gw/agents";
import { boundedWindow, isId, LIMITS, notFound } from "@gw/core";
import type { AgentEventsCtx } from "./record.ts";
import { agentEventRepo } from "./repos/agent-events.ts";
import type { AgentEventSummaryJson } from "./schema.ts";

export const AGENT_EVENT_SUMMARY_SCHEMA = "gw.agent-event-summary.v1" as const;

/**
 * One agent's activity over [since, until] on occurred_at (defaults: the last 24 hours; at most
 * LIMITS.agentEventMaxRangeDays). The agent may be soft-deleted: its history stays readable.
 * Definitions are in docs/agent-events.md.
 */
export async function summarizeAgentEvents({
  ctx,
  input,
}: {
  ctx: AgentEventsCtx;
  input: { agentId: string; since?: Date | undefined; until?: Date | undefined };
}): Promise<AgentEventSummaryJson> {
  const { since, until } = boundedWindow(input, LIMITS.agentEventMaxRangeDays);
  const known =
    isId("agt", input.agentId) &&
    (await agentRepo.exists(ctx.db, ctx.tenantId, input.agentId, { live: false }));
  if (!known) throw notFound("agent");
  const s = await agentEventRepo.summary(ctx.db, ctx.tenantId, input.agentId, since, until);
  return {
    schema: AGENT_EVENT_SUMMARY_SCHEMA,
    agent_id: input.agentId,
    since: since.toISOString(),
    until: until.toISOString(),
    summary: {
      sessions: s.sessions,
      tool_calls: s.toolCalls,
      tools_succeeded: s.toolsSucceeded,
      tools_failed: s.toolsFailed,
      tool_duration_ms: s.toolDurationMs,
      input_tokens: s.inputTokens,
      output_tokens: s.outputTokens,
      cost_usd: Number(s.costUsd),
      cost_known: s.costKnown,
      ...(s.lastEventAt ? { last_event_at: s.lastEventAt.toISOString() } : {}),
    },
  };
}
