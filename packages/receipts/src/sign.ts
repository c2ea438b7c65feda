import { CompactSign, FlattenedSign } from "jose";
import type { ReceiptKey } from "./key.ts";

export type ReceiptAction = "gateway.invocation" | "gateway.policy_decision";

/** The signed statement (docs/receipts.md, What is signed). Metadata and digests only, never bodies. */
export type ReceiptPayload = {
  artifact_id: string;
  actor: string;
  action: ReceiptAction;
  /** The inv_ or pdec_ id attested. */
  subject: string;
  tenant_id: string;
  agent_id: string;
  /** Invocation status, or the decision's action. */
  status: string;
  /** "sha256:<hex>" of the bytes forwarded each way; absent for a decision. */
  digests?: { request: string; response: string };
  settlement?: { status: string; tx_hash?: string };
  /**
   * A paid MCP tool call (docs/payments.md, MCP tool calls): the exposed tool name and the digest
   * pinned for it when the call was admitted (null: not pinned), and the policy decision that let
   * it through (null: the tenant has no policy). With `digests.response` and `settlement`, the
   * receipt ties what was paid to what was called and what was answered.
   */
  binding?: {
    tool: { name: string; pinned_digest: string | null };
    decision: { id: string; action: string; matched_rule: string } | null;
  };
  /** A decision's approval (`apr_`), asked for or used; absent otherwise. */
  approval_id?: string;
  signed_at: string;
};

const encoder = new TextEncoder();

/** A compact JWS (EdDSA) whose protected header names the key by its RFC 7638 thumbprint. */
export function signReceipt(key: ReceiptKey, payload: ReceiptPayload): Promise<string> {
  return new CompactSign(encoder.encode(JSON.stringify(payload)))
    .setProtectedHeader({ alg: "EdDSA", kid: key.kid, typ: "gw-receipt+jws" })
    .sign(key.privateKey);
}

/** A JWS over a detached payload, as a JSON serialization's `protected` and `signature` members. */
export type DetachedSignature = { protected: string; signature: string };

/**
 * Signs `payload` (its UTF-8 bytes) with the receipt key, the payload left out of the result: the
 * verifier recomputes it (an A2A agent card's canonical JSON). The protected header names the key
 * by `kid`, as every receipt does.
 */
export async function signDetached(
  key: ReceiptKey,
  payload: string,
  header: { typ: string; jku?: string },
): Promise<DetachedSignature> {
  const jws = await new FlattenedSign(encoder.encode(payload))
    .setProtectedHeader({ alg: "EdDSA", kid: key.kid, ...header })
    .sign(key.privateKey);
  return { protected: jws.protected as string, signature: jws.signature };
}
