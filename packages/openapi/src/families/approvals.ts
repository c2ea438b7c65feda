import { APPROVAL_STATUSES, ApprovalDecisionInput, ApprovalResource } from "@gw/policy";
import * as v from "valibot";
import { enumQuery, error, listOf, ok, pageParams } from "../common.ts";
import type { Route } from "../route.ts";

const tags = ["Approvals"];
const notFound = error("No approval with this id in the caller's tenant.");

const decide = (verb: "approve" | "deny", operationId: string, summary: string): Route => ({
  method: "post",
  path: `/v1/approvals/{id}/${verb}`,
  operationId,
  summary,
  description:
    verb === "approve"
      ? "Needs scope approvals:decide. The same caller's identical call then passes its require_approval rule once within GW_APPROVAL_TTL_SECONDS."
      : "Needs scope approvals:decide. The held call stays refused.",
  tags,
  body: { json: ApprovalDecisionInput, required: false },
  responses: {
    "200": ok("The decided approval.", ApprovalResource),
    "400": error("Malformed body (the message names the field)."),
    "403": error("The token lacks scope approvals:decide."),
    "404": notFound,
    "409": error("The approval is not pending (already decided, used or expired)."),
  },
});

export const approvalsRoutes: Route[] = [
  {
    method: "get",
    path: "/v1/approvals",
    operationId: "listApprovals",
    summary: "Approvals of calls held by require_approval rules",
    description: "Newest first. Pending approvals expire after 24 h.",
    tags,
    params: [
      ...pageParams,
      enumQuery("status", APPROVAL_STATUSES, "Only approvals in this state."),
      { name: "agent_id", in: "query", description: "Only this agent's approvals.", schema: v.string() },
    ],
    responses: {
      "200": ok("A page of approvals.", listOf(ApprovalResource)),
      "400": error("Invalid status, limit or offset."),
    },
  },
  {
    method: "get",
    path: "/v1/approvals/{id}",
    operationId: "getApproval",
    summary: "Get an approval",
    tags,
    responses: { "200": ok("The approval.", ApprovalResource), "404": notFound },
  },
  decide("approve", "approveApproval", "Approve a held call"),
  decide("deny", "denyApproval", "Deny a held call"),
];

export const approvalsComponents = {
  Approval: ApprovalResource,
} satisfies Record<string, v.GenericSchema>;
