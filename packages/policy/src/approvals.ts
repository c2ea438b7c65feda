import { createHash } from "node:crypto";
import { LIMITS, newId } from "@gw/core";
import type { Query } from "@gw/db";
import { canonicalJson } from "@gw/verifier";
import {
  type Approval,
  type ApprovalBinding,
  type ApprovalFilter,
  approvalsRepo,
} from "./repos/approvals.ts";

/** Pending approvals expire after a day (docs/policy.md "Approvals"). */
export const APPROVAL_PENDING_SECONDS = 86_400;
/** What binds an approval to a call, from the call as the gateway parsed it. */
export type ApprovalCall = {
  tenantId: string;
  agentId: string;
  sub: string;
  /**
   * The parsed JSON-RPC method (MCP's or A2A's; named for no one protocol) and MCP tool; null for
   * a call with no parsed method.
   */
  rpcMethod: string | null;
  mcpTool: string | null;
  /** `params.arguments` of a tools/call (undefined when absent or not a tools/call). */
  arguments: unknown;
  /** The bytes forwarded: a non-MCP call is bound to them. */
  body: () => Promise<Uint8Array>;
};

const sha256 = (data: string | Uint8Array) => `sha256:${createHash("sha256").update(data).digest("hex")}`;

/**
 * The binding: an MCP call by the digest of the RFC 8785 canonical JSON of its tools/call
 * arguments (so key order and number spelling do not matter), anything else by the digest of its
 * raw body. Arguments that cannot be canonicalised (too deep, not I-JSON) bind the raw body too.
 */
export async function bindingOf(
  call: ApprovalCall,
): Promise<{ binding: ApprovalBinding; arguments: string | null }> {
  let digest: string | null = null;
  let shown: string | null = null;
  if (call.rpcMethod !== null) {
    try {
      const canonical = canonicalJson(call.arguments === undefined ? {} : call.arguments);
      digest = sha256(canonical);
      // Larger arguments are bound by digest only (`arguments` null).
      if (Buffer.byteLength(canonical) <= LIMITS.approvalArgumentsMaxBytes) shown = canonical;
    } catch {
      digest = null;
    }
  }
  digest ??= sha256(await call.body());
  return {
    binding: {
      agentId: call.agentId,
      sub: call.sub,
      mcpMethod: call.rpcMethod ?? "",
      mcpTool: call.mcpTool ?? "",
      callDigest: digest,
    },
    arguments: shown,
  };
}

/**
 * A call a `require_approval` rule holds, once bound (`bindingOf`): an approved approval of exactly
 * this call is used (once, race-free across replicas) and the call passes; otherwise the pending
 * approval of this call, created on the first attempt, is returned and the call is refused.
 */
export async function useOrRequestApproval(
  query: Query,
  tenantId: string,
  bound: { binding: ApprovalBinding; arguments: string | null },
): Promise<{ used: boolean; id: string }> {
  const used = await approvalsRepo.use(query, tenantId, bound.binding);
  if (used !== null) return { used: true, id: used };
  const id = await approvalsRepo.request(query, tenantId, bound.binding, {
    id: newId("apr"),
    arguments: bound.arguments,
    pendingSeconds: APPROVAL_PENDING_SECONDS,
  });
  return { used: false, id };
}

export type ApprovalsCtx = { query: Query; tenantId: string };

export function listApprovals({ ctx, filter }: { ctx: ApprovalsCtx; filter: ApprovalFilter }) {
  return approvalsRepo.list(ctx.query, ctx.tenantId, filter);
}

export function getApproval({ ctx, id }: { ctx: ApprovalsCtx; id: string }): Promise<Approval | undefined> {
  return approvalsRepo.get(ctx.query, ctx.tenantId, id);
}

/**
 * A person's decision. Undefined: no such approval in the tenant (404); null: not pending (409).
 * An approval lets the same caller's identical call pass once within `usableSeconds`.
 */
export function decideApproval({
  ctx,
  id,
  input,
}: {
  ctx: ApprovalsCtx;
  id: string;
  input: { status: "approved" | "denied"; reason: string | null; by: string; usableSeconds: number };
}) {
  return approvalsRepo.decide(ctx.query, ctx.tenantId, id, input);
}
