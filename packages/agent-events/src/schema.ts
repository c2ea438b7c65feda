import { parseRfc3339 } from "@gw/core";
import * as v from "valibot";

export const AGENT_EVENT_SCHEMA = "gw.agent-event.v1";
export const AGENT_EVENT_TYPES = [
  "session.started",
  "session.ended",
  "tool.completed",
  "model.usage",
] as const;
export const AGENT_EVENT_OUTCOMES = ["succeeded", "failed", "cancelled"] as const;

// No control characters anywhere: Postgres text cannot hold NUL, and none of these fields has a
// reason to carry a newline or an escape sequence into a console.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point.
const CONTROL = /[\u0000-\u001f\u007f]/;

/** A bounded, non-empty string without control characters. */
const Text = (max: number) =>
  v.pipe(
    v.string("must be a string"),
    v.minLength(1, "must not be empty"),
    v.maxLength(max, `must be at most ${max} characters`),
    v.check((s) => !CONTROL.test(s), "must not contain control characters"),
  );

const Count = v.pipe(
  v.number("must be a number"),
  v.integer("must be an integer"),
  v.minValue(0, "must not be negative"),
  v.maxValue(Number.MAX_SAFE_INTEGER, "is too large"),
);

/**
 * The agent event and its rules (docs/agent-events.md). Strict: any other field, prompts and tool
 * arguments included, is refused, so the record cannot carry call content.
 */
export const AgentEvent = v.strictObject(
  {
    schema: v.literal(AGENT_EVENT_SCHEMA, `must be "${AGENT_EVENT_SCHEMA}"`),
    event_id: Text(256),
    agent_id: v.string("must be a string"),
    type: v.picklist(AGENT_EVENT_TYPES, `must be one of: ${AGENT_EVENT_TYPES.join(", ")}`),
    session_ref: v.pipe(
      v.string("must be a string"),
      v.regex(/^sha256:[0-9a-f]{64}$/, "must be sha256: followed by 64 lower-case hex digits"),
    ),
    occurred_at: v.pipe(
      v.string("must be a string"),
      v.check((s) => parseRfc3339(s) !== undefined, "must be an RFC 3339 date-time in years 0001..9999"),
      v.transform((s) => parseRfc3339(s) as Date),
    ),
    tool_name: v.optional(Text(256)),
    outcome: v.optional(
      v.picklist(AGENT_EVENT_OUTCOMES, `must be one of: ${AGENT_EVENT_OUTCOMES.join(", ")}`),
    ),
    duration_ms: v.optional(Count),
    provider: v.optional(Text(128)),
    model: v.optional(Text(256)),
    input_tokens: v.optional(Count),
    output_tokens: v.optional(Count),
    cache_read_tokens: v.optional(Count),
    cache_write_tokens: v.optional(Count),
    cost_usd: v.optional(
      v.pipe(
        v.number("must be a number"),
        v.finite("must be a finite number"),
        v.minValue(0, "must not be negative"),
        v.maxValue(1e12, "is too large"),
      ),
    ),
    source: Text(128),
    source_version: Text(64),
  },
  "must be a JSON object",
);

export type AgentEventInput = v.InferOutput<typeof AgentEvent>;

const Time = v.pipe(v.string(), v.isoTimestamp());
const Total = v.pipe(v.number(), v.integer(), v.minValue(0));

/** The answer of POST /v1/agent-events (201 first time, 200 for a repeated event_id). */
export const AgentEventRecorded = v.object({ recorded: v.literal(true), duplicate: v.boolean() });
export type AgentEventRecordedJson = v.InferOutput<typeof AgentEventRecorded>;

/** The answer of GET /v1/agent-events/summary (docs/agent-events.md). */
export const AgentEventSummary = v.object({
  schema: v.literal("gw.agent-event-summary.v1"),
  agent_id: v.string(),
  since: Time,
  until: Time,
  summary: v.object({
    sessions: Total,
    tool_calls: Total,
    tools_succeeded: Total,
    tools_failed: Total,
    tool_duration_ms: Total,
    input_tokens: Total,
    output_tokens: Total,
    cost_usd: v.number(),
    cost_known: v.boolean(),
    last_event_at: v.optional(Time),
  }),
});
export type AgentEventSummaryJson = v.InferOutput<typeof AgentEventSummary>;
