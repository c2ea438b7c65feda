import {
  INVOCATION_MODES,
  INVOCATION_STATUSES,
  InvocationDetail,
  InvocationItem,
  RECORDED_FILTERS,
  SettlementResource,
} from "@gw/invocations";
import * as v from "valibot";
import { enumQuery, error, listOf, ok, pageParams, timeQuery } from "../common.ts";
import type { Route } from "../route.ts";

const tags = ["Invocations"];
const SETTLEMENT_STATUSES = SettlementResource.entries.status.options;

export const invocationsRoutes: Route[] = [
  {
    method: "get",
    path: "/v1/invocations",
    operationId: "listInvocations",
    summary: "Invocation history",
    description: "Tenant-scoped, newest first. Bodies are never returned here.",
    tags,
    params: [
      ...pageParams,
      enumQuery("status", INVOCATION_STATUSES, "Only invocations in this state."),
      enumQuery("mode", INVOCATION_MODES, "Only this proxy mode."),
      enumQuery("settlement", SETTLEMENT_STATUSES, "Only invocations whose settlement has this status."),
      enumQuery(
        "policy",
        ["allow", "warn"],
        "Only invocations with this policy action (rows without a decision match neither).",
      ),
      {
        name: "agent_id",
        in: "query",
        description: "Only this agent's invocations; a value naming no agent matches nothing.",
        schema: v.pipe(v.string(), v.maxLength(128)),
      },
      // The protocols' recorded fields' filters (schema/recorded.ts in packages/db).
      ...RECORDED_FILTERS.map((r) => ({
        name: r.param,
        in: "query" as const,
        description: r.description,
        schema: v.pipe(v.string(), v.maxLength(r.maxBytes)),
      })),
      timeQuery("since", "Inclusive lower bound on created_at."),
      timeQuery("until", "Inclusive upper bound on created_at."),
    ],
    responses: {
      "200": ok("A page of invocations.", listOf(InvocationItem)),
      "400": error(
        `Invalid status, mode, settlement, policy, since, until, limit or offset; an ${["agent_id", ...RECORDED_FILTERS.map((r) => r.param)].join(", ").replace(/, ([^,]*)$/, " or $1")} that is too long or holds a NUL; since after until.`,
      ),
    },
  },
  {
    method: "get",
    path: "/v1/invocations/{id}",
    operationId: "getInvocation",
    summary: "One invocation, with captured bodies",
    description:
      "req_body and resp_body appear only when body_captured is true and the token holds invocations:read_body.",
    tags,
    responses: {
      "200": ok("The invocation.", InvocationDetail),
      "404": error("No invocation with this id in the caller's tenant."),
    },
  },
];

export const invocationsComponents = {
  Invocation: InvocationItem,
  InvocationDetail,
  Settlement: SettlementResource,
} satisfies Record<string, v.GenericSchema>;
