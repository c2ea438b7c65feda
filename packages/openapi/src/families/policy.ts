import { LIMITS } from "@gw/core";
import {
  ACTIONS,
  PolicyDecisionResource,
  PolicyDocument,
  PolicyResource,
  PolicyWritten,
  QuotaUseResource,
} from "@gw/policy";
import * as v from "valibot";
import { bodyTooLarge, enumQuery, error, listOf, noContent, ok, pageParams, timeQuery } from "../common.ts";
import type { Route } from "../route.ts";

const tags = ["Policy"];

export const policyRoutes: Route[] = [
  {
    method: "get",
    path: "/v1/policy",
    operationId: "getPolicy",
    summary: "The tenant's policy document",
    description:
      "version 0 and no rules when the tenant never had one; after a delete, the last version with no rules and no default.",
    tags,
    responses: { "200": ok("The document.", PolicyResource) },
  },
  {
    method: "put",
    path: "/v1/policy",
    operationId: "putPolicy",
    summary: "Replace the policy document",
    tags,
    body: { json: PolicyDocument, required: true },
    responses: {
      "200": ok("The new version.", PolicyWritten),
      "400": error("Malformed document (the message names the field)."),
      "413": bodyTooLarge(LIMITS.jsonBodyMaxBytes),
    },
  },
  {
    method: "delete",
    path: "/v1/policy",
    operationId: "deletePolicy",
    summary: "Remove the policy document",
    description:
      "Nothing is evaluated or recorded for the tenant's calls afterwards (policy_action null on new invocations). Idempotent. The version keeps counting: the next PUT is numbered above every earlier version.",
    tags,
    responses: { "204": noContent },
  },
  {
    method: "get",
    path: "/v1/policy/decisions",
    operationId: "listPolicyDecisions",
    summary: "Recorded decisions, denials included",
    description: `Newest first; limit clamped to 1..${LIMITS.policyDecisionsMaxLimit}.`,
    tags,
    params: [
      ...pageParams,
      timeQuery("since", "Inclusive lower bound on created_at."),
      timeQuery("until", "Inclusive upper bound on created_at."),
      enumQuery("action", ACTIONS, "Only decisions with this action."),
      { name: "agent_id", in: "query", description: "Only this agent's decisions.", schema: v.string() },
    ],
    responses: {
      "200": ok("A page of decisions.", listOf(PolicyDecisionResource)),
      "400": error("Invalid since, until, action, limit or offset; since after until."),
    },
  },
  {
    method: "get",
    path: "/v1/policy/quotas",
    operationId: "listPolicyQuotas",
    summary: "Current use of the policy's limit rules",
    description:
      "The counters of the tenant's limit rules (current policy version) in their current fixed UTC windows. With key: one entry per limit rule for that key value (used 0 when untouched); without it, the counters with use, at most 100 per rule.",
    tags,
    params: [
      {
        name: "key",
        in: "query",
        description:
          "A key value as the rule's key expression produces it (a long one is listed as sha256:<hex>).",
        schema: v.string(),
      },
    ],
    responses: {
      "200": ok("The counters.", v.object({ data: v.array(QuotaUseResource) })),
      "400": error("An unknown query parameter, or a key over 16 KiB."),
      "503": error("Redis does not answer: the shared counts cannot be read."),
    },
  },
];

// PolicyDocument stays inline: its valibot input type is `unknown` (arrays are refused before the
// object schema runs), so it cannot take part in @gw/client's type comparison.
export const policyComponents = {
  Policy: PolicyResource,
  PolicyWritten,
  PolicyDecision: PolicyDecisionResource,
  PolicyQuotaUse: QuotaUseResource,
} satisfies Record<string, v.GenericSchema>;
