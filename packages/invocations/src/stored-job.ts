import type { AdmittedPayment } from "@gw/payments";
import * as v from "valibot";

/**
 * The transactional call as it was accepted: snapshotted by the proxy and stored with the pending
 * invocation (`invocation_requests.job`, jsonb; Postgres is the source of truth, docs/adr/0020 and
 * 0023). The queue carries ids only; the worker reads this back in the statement that claims the
 * call and checks it (`jobOf`) before making the call.
 */
export type StoredJob = {
  invocationId: string;
  tenantId: string;
  agentId: string;
  /**
   * The agent's upstream when the call was accepted; the dial-time guard still checks it. Null
   * for a virtual MCP server, which has `virtual` instead.
   */
  upstreamUrl: string | null;
  /**
   * A virtual MCP server's name and members when the call was accepted (docs/mcp.md); the worker
   * looks the member agents up when it makes the call.
   */
  virtual?: { name: string; members: StoredMember[] } | undefined;
  credentialRef: string | null;
  protocol: "http" | "mcp";
  /** JSON-RPC method of an MCP call; decides whether a retry is allowed. */
  mcpMethod: string | null;
  /**
   * JSON-RPC id of an MCP request (null for a notification, a response or an http agent): the
   * worker collects the response with this id when the server answers with an event stream.
   * Optional only for calls stored before it existed.
   */
  mcpRequestId?: string | number | null | undefined;
  captureBodies: boolean;
  /** The agent's emit_receipts when accepted (false: no receipt, so nothing is hashed). */
  emitReceipts?: boolean | null | undefined;
  /** Caller headers, already stripped of Authorization, X-PAYMENT, PAYMENT-SIGNATURE, x-gateway-* and hop-by-hop. */
  headers: string[];
  /** The caller's address, appended to X-Forwarded-For upstream. */
  clientAddress?: string | undefined;
  /**
   * The call's verified x402 payment (a few KiB), which the worker settles before it forwards when
   * `facilitator` is set. Absent for unpriced agents.
   */
  payment?: AdmittedPayment | undefined;
  /**
   * The caller's bearer token, sealed with the credentials keyring to this tenant and invocation,
   * present only when the agent's credential is oauth2_token_exchange (the worker exchanges it).
   * It lives in the stored request, never in Redis, and goes when the request is purged.
   */
  subjectToken?: { ciphertext: string; wrappedKey: string; kekId: string } | undefined;
};

export type StoredMember = {
  agent_id: string;
  prefix: string;
  include?: string[] | undefined;
  exclude?: string[] | undefined;
};

/** A stored call and the bytes to forward: what the worker makes. */
export type TransactJob = StoredJob & { body: Buffer };

const Text = v.string();
/**
 * The verified payment as stored: its facts are checked; the signed payload and requirements are
 * the facilitator's to judge (they were verified when the call was accepted).
 */
const StoredPayment = v.looseObject({
  version: v.picklist([1, 2]),
  network: Text,
  asset: Text,
  amount: Text,
  payer: Text,
  nonce: Text,
  paymentPayload: v.looseObject({}),
  paymentRequirements: v.looseObject({}),
  facilitator: v.nullable(v.object({ url: Text, credentialRef: v.nullable(Text) })),
});

const StoredJobSchema = v.object({
  invocationId: Text,
  tenantId: Text,
  agentId: Text,
  upstreamUrl: v.nullable(v.pipe(Text, v.url())),
  virtual: v.optional(
    v.object({
      name: Text,
      members: v.array(
        v.object({
          agent_id: Text,
          prefix: Text,
          include: v.optional(v.array(Text)),
          exclude: v.optional(v.array(Text)),
        }),
      ),
    }),
  ),
  credentialRef: v.nullable(Text),
  protocol: v.picklist(["http", "mcp"]),
  mcpMethod: v.nullable(Text),
  mcpRequestId: v.optional(v.nullable(v.union([Text, v.number()]))),
  captureBodies: v.boolean(),
  emitReceipts: v.optional(v.nullable(v.boolean())),
  headers: v.array(Text),
  clientAddress: v.optional(Text),
  payment: v.optional(StoredPayment),
  subjectToken: v.optional(v.object({ ciphertext: Text, wrappedKey: Text, kekId: Text })),
});

/**
 * The call a worker claimed, from its stored request, or null when what is stored is not a call
 * this version can make (the worker then ends the invocation instead of guessing at it).
 */
export function jobOf(stored: unknown, body: Buffer): TransactJob | null {
  const parsed = v.safeParse(StoredJobSchema, stored);
  if (!parsed.success) return null;
  // The payment's signed parts were checked as objects only: they are passed on as stored.
  return { ...(parsed.output as StoredJob), body };
}
