import { AGENT_PROTOCOLS, type AgentPrice, type AgentToolPrice } from "@gw/db";
import type { AdmittedPayment } from "@gw/payments";
import * as v from "valibot";

const Text = v.string();

/**
 * The verified x402 payment: its facts are checked; the signed payload and requirements are the
 * facilitator's to judge (they were verified when the call was admitted) and pass on as they are.
 */
const PaymentFacts = v.looseObject({
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
const Payment = v.custom<AdmittedPayment>((x) => v.is(PaymentFacts, x), "invalid payment");

/**
 * An MCP agent's per-tool prices and its price (their defaults), for the `tools/list` answer's
 * `_meta["x402/price"]` (docs/payments.md, MCP tool calls); checked when the agent was written.
 */
const Prices = v.custom<{ toolPrices: AgentToolPrice[] | null; price: AgentPrice | null }>(
  (x) => v.is(v.object({ toolPrices: v.array(v.looseObject({})), price: v.nullable(v.looseObject({})) }), x),
  "invalid prices",
);

/** A member of a virtual MCP server as the agent stores it (docs/mcp.md, Virtual MCP servers). */
export const MemberSpecSchema = v.object({
  agent_id: Text,
  prefix: Text,
  include: v.optional(v.array(Text)),
  exclude: v.optional(v.array(Text)),
});

/**
 * What step 9 needs to forward a call, whichever process runs it: built once from the admitted
 * call by the proxy pipeline (`services/proxy/src/forwarded.ts`), passed on as it is by the
 * streaming route, and stored as the transactional call's stored request (`stored.ts`), from
 * which a worker reads it back. The process that forwards adds only what is its own (`ForwardCall`
 * in call.ts: the record port, the caller, the resolved upstream and members). A field step 9
 * needs is added here, and filled where the pipeline builds the value; with a default
 * (`v.optional(schema, default)`), so that a call stored before the field existed still reads.
 */
export const ForwardedSchema = v.object({
  invocationId: Text,
  tenantId: Text,
  agentId: Text,
  /** POST on both modes; GET (standalone SSE stream) and DELETE (session end) for MCP streaming. */
  method: v.picklist(["POST", "GET", "DELETE"]),
  /**
   * The agent's upstream when the call was admitted; the dial-time guard still checks it. Null
   * for a virtual MCP server, which has `virtual` instead.
   */
  upstreamUrl: v.nullable(v.pipe(Text, v.url())),
  /**
   * A virtual MCP server's name and members when the call was admitted; the member agents are
   * looked up when the call is made (a member deactivated since is left out). Null otherwise.
   */
  virtual: v.nullable(
    v.object({
      name: Text,
      members: v.array(MemberSpecSchema),
      /** tools/list shows every tool, or search_tools and call_tool (docs/mcp.md, Tool search). */
      discovery: v.optional(v.picklist(["list", "search"]), "list"),
    }),
  ),
  credentialRef: v.nullable(Text),
  /** The protocol the agent speaks: the one list of names (`PROTOCOL_NAMES` in protocols/protocol.ts). */
  protocol: v.picklist(AGENT_PROTOCOLS),
  /**
   * The JSON-RPC method of the request, whatever the protocol (MCP's, A2A's): it decides whether a
   * retry is allowed. `rpcMethod`, not `method`: `method` is the HTTP method. (Stored as
   * `mcpMethod` before stored-call version 3.)
   */
  rpcMethod: v.nullable(Text),
  /**
   * The JSON-RPC id of the request (null for a notification or no JSON-RPC): an answer is matched
   * by it, a collected event stream read up to its response. `rpcId`, not `requestId`: that is
   * the exchange's own `X-Request-Id`. (Stored as `mcpRequestId` before version 3.)
   */
  rpcId: v.nullable(v.union([Text, v.number()])),
  captureBodies: v.boolean(),
  /** The agent's emit_receipts (false: no receipt, so nothing is hashed; null: the deployment's). */
  emitReceipts: v.nullable(v.boolean()),
  /**
   * The caller's headers as a raw [name, value, ...] list; `upstreamRequestHeaders` filters them at
   * the dial. A stored call holds them already stripped of Authorization, X-PAYMENT,
   * PAYMENT-SIGNATURE, x-gateway-* and hop-by-hop headers.
   */
  headers: v.pipe(v.array(Text), v.readonly()),
  /** The caller's address, appended to X-Forwarded-For upstream. */
  clientAddress: v.optional(Text),
  /** The verified x402 payment, settled before the dial when its tenant has a facilitator. */
  payment: v.nullable(Payment),
  /** A `tools/list` (or a search-mode `search_tools`) of an agent with per-tool prices: the prices its answer shows; null otherwise. */
  prices: v.optional(v.nullable(Prices), null),
  /**
   * The answer rules step 6 chose for the call's answer (docs/policy.md "Answer guardrails"): the
   * policy version, the rules' indices, and the called tool. Null: no rule applies, the answer is
   * never read.
   */
  answerGuard: v.optional(
    v.nullable(
      v.object({
        version: v.number(),
        rules: v.array(v.number()),
        tool: v.nullable(Text),
      }),
    ),
    null,
  ),
  /**
   * The caller (the token's `sub`): whose grant a per-user credential opens at the dial
   * (docs/connections.md). Null for calls stored before it existed.
   */
  sub: v.optional(v.nullable(Text), null),
});

/** What step 9 needs to forward a call (see `ForwardedSchema`). */
export type Forwarded = v.InferOutput<typeof ForwardedSchema>;
export type MemberSpec = v.InferOutput<typeof MemberSpecSchema>;
