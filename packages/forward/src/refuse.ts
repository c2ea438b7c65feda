import { ERROR_CLASS } from "@gw/invocations";
import { type Settled, settlementFailed } from "@gw/payments";
import { recordProxyCall } from "@gw/telemetry";
import { upstreamError } from "./answers.ts";
import { type AnswerSink, type ForwardCall, gatewayHeaders } from "./call.ts";
import type { ForwardDeps } from "./deps.ts";
import { toolSettlementRefused } from "./protocols/mcp-x402.ts";
import { drain, keep, relayedFacts } from "./sink.ts";
import type { Tap } from "./tap.ts";

/** A call that ends before it was dialled: its credential was refused, or its settlement failed. */
export async function refuse(
  call: ForwardCall,
  tap: Tap,
  sink: AnswerSink,
  why: "credential" | "unsettled",
  settled: Settled,
  deps: ForwardDeps,
): Promise<void> {
  const unsettled = why === "unsettled";
  if (sink.kind === "collect") {
    const facts = tap.facts(settled.facts(!unsettled));
    if (!unsettled) return call.record.fail("credential", facts);
    // A paid MCP tool call's poll shows the transport's answer: the payment-required result.
    const refused = toolSettlementRefused(call, settled, {});
    if (!refused) return call.record.failUnsettled(facts);
    const body = Buffer.from(JSON.stringify(refused.body));
    return call.record.failUnsettled(facts, {
      result: {
        status: 200,
        contentType: "application/json",
        headers: null,
        body,
        expiresAt: new Date(Date.now() + deps.config.GW_RESULT_TTL_SECONDS * 1000),
      },
    });
  }
  recordProxyCall({
    mode: "streaming",
    outcome: "failed",
    errorClass: unsettled ? "none" : ERROR_CLASS.credential,
  });
  const facts = relayedFacts(tap, undefined, settled.facts(false));
  keep(sink, call, unsettled ? call.record.failUnsettled(facts) : call.record.fail("credential", facts));
  drain(sink);
  if (!unsettled) throw upstreamError("credential", gatewayHeaders(call));
  // Over MCP a failed settlement is the payment-required tool result (HTTP 200), its receipt failed.
  const refused = toolSettlementRefused(call, settled, gatewayHeaders(call));
  throw refused ?? settlementFailed(gatewayHeaders(call));
}
