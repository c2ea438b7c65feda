import { AUDIT_ACTIONS, AuditEventResource, AuditVerifyResource } from "@gw/audit";
import { LIMITS } from "@gw/core";
import * as v from "valibot";
import { enumQuery, error, listOf, ok, pageParams, timeQuery } from "../common.ts";
import type { Route } from "../route.ts";

const tags = ["Audit"];
const forbidden = error("The token lacks scope audit:read.");

export const auditRoutes: Route[] = [
  {
    method: "get",
    path: "/v1/audit",
    operationId: "listAuditEvents",
    summary: "Audit events of the tenant's control-plane writes",
    description: `Needs scope audit:read. Newest first; limit clamped to 1..${LIMITS.auditMaxLimit}.`,
    tags,
    params: [
      ...pageParams,
      timeQuery("since", "Inclusive lower bound on created_at."),
      timeQuery("until", "Inclusive upper bound on created_at."),
      enumQuery("action", AUDIT_ACTIONS, "Only events of this action."),
      {
        name: "actor",
        in: "query",
        description: "Only events of this actor (a token's sub).",
        schema: v.string(),
      },
      {
        name: "resource_id",
        in: "query",
        description: "Only events about this resource.",
        schema: v.string(),
      },
    ],
    responses: {
      "200": ok("A page of events.", listOf(AuditEventResource)),
      "400": error("Invalid since, until, action, actor, resource_id, limit or offset; since after until."),
      "403": forbidden,
    },
  },
  {
    method: "get",
    path: "/v1/audit/export",
    operationId: "exportAuditEvents",
    summary: "The tenant's audit events as NDJSON, oldest first",
    description: "Needs scope audit:read. One AuditEvent per line, for a SIEM to collect (docs/audit.md).",
    tags,
    params: [
      timeQuery("since", "Inclusive lower bound on created_at."),
      timeQuery("until", "Inclusive upper bound on created_at."),
    ],
    responses: {
      "200": {
        description: "One JSON event per line.",
        body: { raw: { "application/x-ndjson": { schema: { type: "string" } } } },
      },
      "400": error("Invalid since or until; since after until."),
      "403": forbidden,
    },
  },
  {
    method: "get",
    path: "/v1/audit/verify",
    operationId: "verifyAuditChain",
    summary: "Walk the tenant's audit chain",
    description:
      "Needs scope audit:read. valid is false when an event's digest does not follow from its fields and the previous digest (an altered, removed or inserted event); first_bad_id names the first such event.",
    tags,
    responses: { "200": ok("The result.", AuditVerifyResource), "403": forbidden },
  },
];

export const auditComponents = {
  AuditEvent: AuditEventResource,
  AuditVerify: AuditVerifyResource,
} satisfies Record<string, v.GenericSchema>;
