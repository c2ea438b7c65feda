import { CompactSign } from "jose";
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
