// @stores once: validation messages, decided before the store.
import type { TestApp } from "@gw/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Caller, caller, createAgent, startGateway } from "./helpers.ts";

// A 400's message names the field and the rule in the project's words (docs/api.md), never the
// value received and never the validation library's own text.
let gw: TestApp;
let call: Caller;
let agent: string;
beforeAll(async () => {
  gw = await startGateway();
  call = await caller(gw);
  agent = await createAgent(call, { upstream_url: "https://example.com" });
});
afterAll(() => gw?.close());

const LONG = "Q".repeat(10_000);
const SECRETISH = "zz-value-987654-zz";
const event = (over: Record<string, unknown>) => ({
  schema: "gw.agent-event.v1",
  event_id: "ev-1",
  agent_id: agent,
  type: "tool.completed",
  session_ref: `sha256:${"a".repeat(64)}`,
  occurred_at: "2024-05-01T10:00:00Z",
  source: "hook",
  source_version: "1",
  ...over,
});
const agentBody = (over: Record<string, unknown>) => ({
  name: "a",
  upstream_url: "https://example.com",
  ...over,
});

type Case = [what: string, method: string, path: string, body: () => unknown, message: string, value: string];
const CASES: Case[] = [
  [
    "agent name too long",
    "POST",
    "/v1/agents",
    () => agentBody({ name: LONG }),
    "name: must have at most 200 characters",
    LONG,
  ],
  [
    "rate_limit.burst below 1",
    "POST",
    "/v1/agents",
    () => agentBody({ rate_limit: { rps: 1, burst: -987654 } }),
    "rate_limit.burst: must be at least 1",
    "987654",
  ],
  [
    "rate_limit.rps above the maximum",
    "POST",
    "/v1/agents",
    () => agentBody({ rate_limit: { rps: 987654321, burst: 1 } }),
    "rate_limit.rps: must be at most 1000000",
    "987654321",
  ],
  [
    "upstream_url too long",
    "POST",
    "/v1/agents",
    () => agentBody({ upstream_url: `https://${LONG}` }),
    "upstream_url: must have at most 2048 characters",
    LONG,
  ],
  [
    "credential_ref empty on PATCH",
    "PATCH",
    "/v1/agents/{agent}",
    () => ({ credential_ref: "" }),
    "credential_ref: must not be empty",
    '""',
  ],
  [
    "mcp_protocol_version not a string",
    "POST",
    "/v1/agents",
    () => agentBody({ mcp_protocol_version: 987654 }),
    "mcp_protocol_version: must be a string",
    "987654",
  ],
  [
    "price.tools key too long",
    "POST",
    "/v1/agents",
    () =>
      agentBody({
        price: {
          amount: "1",
          asset: "USDC",
          network: "base",
          pay_to: `0x${"a".repeat(40)}`,
          tools: { [LONG]: "1" },
        },
      }),
    "price.tools.",
    LONG,
  ],
  [
    "price.pay_to malformed",
    "POST",
    "/v1/agents",
    () => agentBody({ price: { amount: "1", asset: "USDC", network: "base", pay_to: SECRETISH } }),
    "price.pay_to: must be a 0x-prefixed 20-byte hex address",
    SECRETISH,
  ],
  [
    "credential name too long",
    "POST",
    "/v1/credentials",
    () => ({ name: LONG, kind: "bearer", secret: "s3cret-s3cret" }),
    "name: must be at most 200 characters",
    LONG,
  ],
  [
    "credential secret not a string",
    "POST",
    "/v1/credentials",
    () => ({ name: "c", kind: "bearer", secret: 987654 }),
    "secret:",
    "987654",
  ],
  [
    "policy classifier url too long",
    "PUT",
    "/v1/policy",
    () => ({ rules: [{ classifier: { url: `https://${LONG}` } }] }),
    "rules.0.classifier.url: must have at most 2048 characters",
    LONG,
  ],
  [
    "policy max_body_bytes too large",
    "PUT",
    "/v1/policy",
    () => ({ rules: [{ action: "allow", match: { max_body_bytes: 2 ** 60 } }] }),
    "rules.0.match.max_body_bytes: must be at most 9007199254740991",
    String(2 ** 60),
  ],
  [
    "policy default not an action",
    "PUT",
    "/v1/policy",
    () => ({ default: SECRETISH }),
    'default: must be "allow", "warn" or "deny"',
    SECRETISH,
  ],
  [
    "settlement facilitator_url too long",
    "PUT",
    "/v1/settlement/config",
    () => ({ facilitator_url: `https://${LONG}` }),
    "facilitator_url: must have at most 2048 characters",
    LONG,
  ],
  [
    "settlement credential ref empty",
    "PUT",
    "/v1/settlement/config",
    () => ({ facilitator_url: "https://f.example", facilitator_credential_ref: "" }),
    "facilitator_credential_ref: must not be empty",
    '""',
  ],
  [
    "agent event tokens negative",
    "POST",
    "/v1/agent-events",
    () => event({ input_tokens: -987654 }),
    "input_tokens: must not be negative",
    "987654",
  ],
  [
    "agent event type unknown",
    "POST",
    "/v1/agent-events",
    () => event({ type: SECRETISH }),
    "type: must be one of:",
    SECRETISH,
  ],
  [
    "an unknown field, named but cut",
    "POST",
    "/v1/agents",
    () => agentBody({ [LONG]: 1 }),
    `unknown field "${"Q".repeat(64)}…"`,
    LONG,
  ],
  [
    "query: limit not an integer",
    "GET",
    `/v1/invocations?limit=${SECRETISH}`,
    () => undefined,
    "limit must be an integer",
    SECRETISH,
  ],
  [
    "query: status unknown",
    "GET",
    `/v1/invocations?status=${SECRETISH}`,
    () => undefined,
    "status must be one of:",
    SECRETISH,
  ],
  [
    "query: since malformed",
    "GET",
    `/v1/policy/decisions?since=${SECRETISH}`,
    () => undefined,
    "since must be an RFC 3339",
    SECRETISH,
  ],
];

describe("validation messages", () => {
  it.each(CASES)(
    "%s: 400 naming the field and the rule, without the value",
    async (_w, method, path, body, message, value) => {
      const res = await call(method, path.replace("{agent}", agent), body());
      expect(res.status).toBe(400);
      const error = res.json.error as string;
      expect(error.startsWith(message), error).toBe(true);
      expect(error).not.toContain(value);
      // Neither valibot's wording nor a measurement of the input ("received 10000").
      for (const word of ["Invalid", "Expected", "received"]) expect(error).not.toContain(word);
      if (value === LONG) expect(error).not.toMatch(/1000\d/);
      expect(error.length).toBeLessThan(200);
    },
  );
});
