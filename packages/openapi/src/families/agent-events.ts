import { AgentEvent, AgentEventRecorded, AgentEventSummary } from "@gw/agent-events";
import { LIMITS } from "@gw/core";
import * as v from "valibot";
import { bodyTooLarge, error, ok, timeQuery } from "../common.ts";
import type { Route } from "../route.ts";

const tags = ["Agent events"];

export const agentEventsRoutes: Route[] = [
  {
    method: "post",
    path: "/v1/agent-events",
    operationId: "recordAgentEvent",
    summary: "Record a metadata-only agent event",
    description: "Idempotent on event_id: a repeat is answered 200 with duplicate true and records nothing.",
    tags,
    body: { json: AgentEvent, required: true },
    responses: {
      "201": ok("Recorded for the first time.", AgentEventRecorded),
      "200": ok("This event_id was already recorded.", AgentEventRecorded),
      "400": error("Invalid event or a field outside the event contract."),
      "404": error("No live agent with this agent_id in the caller's tenant."),
      "413": bodyTooLarge(LIMITS.agentEventMaxBytes),
    },
  },
  {
    method: "get",
    path: "/v1/agent-events/summary",
    operationId: "getAgentEventSummary",
    summary: "One agent's activity over a window",
    description: `Window on occurred_at; default the last 24 hours, at most ${LIMITS.agentEventMaxRangeDays} days.`,
    tags,
    params: [
      { name: "agent_id", in: "query", required: true, description: "The agent.", schema: v.string() },
      timeQuery("since", "Start of the window."),
      timeQuery("until", "End of the window."),
    ],
    responses: {
      "200": ok("The summary.", AgentEventSummary),
      "400": error("Missing agent_id, invalid since/until, or a window too long or reversed."),
      "404": error("No agent with this id in the caller's tenant."),
    },
  },
];

export const agentEventsComponents = {
  AgentEvent,
  AgentEventRecorded,
  AgentEventSummary,
} satisfies Record<string, v.GenericSchema>;
