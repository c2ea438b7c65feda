import type { IncomingHttpHeaders } from "node:http";
import type { AgentRow } from "@gw/agents";
import type { Forwarded, Protocol, RequestFacts } from "@gw/forward";
import type { AppEnv } from "@gw/http";
import type { Reservation } from "@gw/invocations";
import type { AdmittedPayment } from "@gw/payments";
import type { UnrecordedDecision } from "@gw/policy";
import type { Target } from "@gw/upstream";

export type Mode = "transactional" | "streaming";

/**
 * One proxied call as it moves through the pipeline (docs/interface.md, The proxy pipeline). Each step takes the Call and
 * returns it with what it established; nothing before step 8 creates an invocation.
 */
export type Call = {
  readonly mode: Mode;
  /** POST on both modes; GET (standalone SSE stream) and DELETE (session end) for MCP streaming. */
  readonly method: "POST" | "GET" | "DELETE";
  readonly principal: AppEnv["Variables"]["principal"];
  readonly tenantId: string;
  /** The agent id of the route. */
  readonly agentId: string;
  /** The path called, e.g. `/v1/proxy/agt_…/stream` (the x402 `resource`). */
  readonly path: string;
  /** The caller's headers (Node's lower-case map) and their raw list (for forwarding). */
  readonly headers: IncomingHttpHeaders;
  readonly rawHeaders: readonly string[];
  /** The caller's address as the gateway saw it (appended to X-Forwarded-For upstream). */
  readonly clientAddress: string | undefined;
  /** Step 2. */
  agent: AgentRow;
  /** Step 2: the protocol the agent speaks, resolved once (how its body is parsed, what is held). */
  speaks: Protocol;
  /** Null for a virtual MCP server, whose members are resolved by the forward step's caller. */
  target: Target | null;
  /** Step 4: X-Gateway-Model. */
  model: string | null;
  /** Step 4: the body held in memory (transactional, MCP POSTs); null while it is streamed. */
  body: Buffer | null;
  /** Step 5: what the protocol parsed from a held body (an MCP POST's JSON-RPC message); null for http. */
  request: RequestFacts | null;
  /** What is forwarded when held: the body, or a verified envelope's inner call. */
  forward: Buffer | null;
  /** Step 6: the policy's decision; null when the tenant has no policy document. */
  policy: { action: "allow" | "warn"; matchedRule: string } | null;
  /** Step 6: that decision's record, written by step 8 with the invocation (null once handed over). */
  decision: UnrecordedDecision | null;
  /** Step 6: the answer rules that apply to the call's answer (docs/policy.md); null: none. */
  answerGuard: Forwarded["answerGuard"];
  /** Step 7: the verified x402 payment, with the tenant's facilitator (null: verified only). */
  payment: AdmittedPayment | null;
  /** Keys step 8 takes together with the invocation (a verified digest, a payment nonce). */
  reservations: Reservation[];
  /** Headers a step adds to the caller's response; both modes apply them in one place. */
  responseHeaders: Record<string, string>;
  /** Step 8. */
  invocationId: string;
};
