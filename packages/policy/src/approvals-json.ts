import { APPROVAL_STATUSES } from "@gw/db";
import * as v from "valibot";
import type { Approval } from "./repos/approvals.ts";

export { APPROVAL_STATUSES };

const Time = v.pipe(v.string(), v.isoTimestamp());

/** An approval as the API shows it (docs/policy.md "Approvals"); the OpenAPI document is generated from it. */
export const ApprovalResource = v.object({
  id: v.string(),
  agent_id: v.string(),
  sub: v.string(),
  mcp_method: v.nullable(v.string()),
  mcp_tool: v.nullable(v.string()),
  /** The tool arguments the caller sent (canonical JSON, parsed); null when over 64 KiB or not MCP. */
  arguments: v.nullable(v.unknown()),
  call_digest: v.string(),
  status: v.picklist(APPROVAL_STATUSES),
  reason: v.nullable(v.string()),
  requested_at: Time,
  decided_at: v.nullable(Time),
  decided_by: v.nullable(v.string()),
  expires_at: Time,
});

/** The body of approve and deny: an optional reason for the record. */
export const ApprovalDecisionInput = v.strictObject({
  reason: v.optional(
    v.pipe(v.string("must be a string"), v.maxLength(1_024, "must be at most 1024 characters")),
  ),
});

export function approvalJson(a: Approval): v.InferOutput<typeof ApprovalResource> {
  return {
    id: a.id,
    agent_id: a.agentId,
    sub: a.sub,
    mcp_method: a.mcpMethod === "" ? null : a.mcpMethod,
    mcp_tool: a.mcpTool === "" ? null : a.mcpTool,
    arguments: a.arguments === null ? null : (JSON.parse(a.arguments) as unknown),
    call_digest: a.callDigest,
    status: a.status,
    reason: a.reason,
    requested_at: a.requestedAt.toISOString(),
    decided_at: a.decidedAt?.toISOString() ?? null,
    decided_by: a.decidedBy,
    expires_at: a.expiresAt.toISOString(),
  };
}
