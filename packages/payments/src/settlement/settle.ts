import { LIMITS } from "@gw/core";
import { callOut } from "@gw/upstream";
import type { Dispatcher } from "undici";
import * as v from "valibot";
import type { VerifiedPayment } from "../verify.ts";

/** Why a settlement failed, coarsely: the facilitator's own bytes are never kept or shown. */
export type SettleFailure =
  | "facilitator_unreachable"
  | "facilitator_timeout"
  | "facilitator_error"
  | "facilitator_invalid_response"
  | "facilitator_credential_error"
  | "payment_rejected";

export type SettleOutcome =
  | { ok: true; attempts: number; transaction: string; fee?: string }
  | { ok: false; attempts: number; reason: SettleFailure };

/** docs/payments.md, settle-then-forward: 15 s per attempt, two retries 100 ms apart. */
export const SETTLE_DEFAULTS = Object.freeze({ timeoutMs: 15_000, retries: 2, backoffMs: 100 });

const Decimal = v.pipe(v.string(), v.regex(/^[0-9]{1,78}$/));
const SettleAnswer = v.union([
  v.object({
    success: v.literal(true),
    transaction: v.pipe(v.string(), v.regex(/^0x[0-9a-fA-F]{64}$/)),
    fee: v.optional(
      v.union([
        Decimal,
        v.pipe(
          v.number(),
          v.integer(),
          v.minValue(0),
          v.transform((n) => String(n)),
        ),
      ]),
    ),
  }),
  v.object({ success: v.literal(false) }),
]);

type Attempt =
  | { kind: "done"; outcome: SettleOutcome }
  | { kind: "retry"; reason: SettleFailure }
  | { kind: "final"; reason: SettleFailure };

async function attemptOnce(
  url: string,
  body: string,
  headers: Record<string, string>,
  dispatcher: Dispatcher,
  timeoutMs: number,
  amount: bigint,
): Promise<Attempt> {
  const answer = await callOut({
    via: dispatcher,
    url,
    method: "POST",
    headers,
    body,
    timeoutMs,
    maxBytes: LIMITS.facilitatorAnswerMaxBytes,
  });
  if (answer.kind === "failed") {
    if (answer.failure === "timeout") return { kind: "final", reason: "facilitator_timeout" };
    // The SSRF guard's refusal is not transient; every other connection failure may be.
    if (answer.failure === "blocked") return { kind: "final", reason: "facilitator_unreachable" };
    return { kind: "retry", reason: "facilitator_unreachable" };
  }
  if (answer.kind !== "answer") return { kind: "retry", reason: "facilitator_invalid_response" };
  // No redirect is followed: a 3xx is a final facilitator error below.
  const status = answer.status;
  if (status >= 500) return { kind: "retry", reason: "facilitator_error" };
  if (status < 200 || status >= 300) return { kind: "final", reason: "facilitator_error" };
  let json: unknown;
  try {
    json = JSON.parse(answer.body.toString("utf8"));
  } catch {
    return { kind: "retry", reason: "facilitator_invalid_response" };
  }
  const parsed = v.safeParse(SettleAnswer, json);
  if (!parsed.success) return { kind: "retry", reason: "facilitator_invalid_response" };
  // success:false is final: never re-submit an authorization the facilitator may still be settling.
  if (!parsed.output.success) return { kind: "final", reason: "payment_rejected" };
  const fee = parsed.output.fee;
  if (fee !== undefined && BigInt(fee) > amount)
    return { kind: "retry", reason: "facilitator_invalid_response" };
  return {
    kind: "done",
    outcome: { ok: true, attempts: 0, transaction: parsed.output.transaction, ...(fee ? { fee } : {}) },
  };
}

/**
 * Settles a verified payment: `POST <facilitatorUrl>/settle` with `{x402Version, paymentPayload,
 * paymentRequirements}` in the generation the caller paid with, through the SSRF-guarded
 * dispatcher (`callOut`), the facilitator credential's header (if any) added. Connection errors, 5xx and
 * unparsable answers are retried; a time-out and `success:false` are final. Never throws.
 */
export async function settlePayment(opts: {
  facilitatorUrl: string;
  payment: VerifiedPayment;
  dispatcher: Dispatcher;
  /** The facilitator credential, opened just before the call (lower-case name). */
  inject?: { header: string; value: string } | undefined;
  timeoutMs?: number;
  retries?: number;
  backoffMs?: number;
}): Promise<SettleOutcome> {
  const { timeoutMs, retries, backoffMs } = { ...SETTLE_DEFAULTS, ...definedOnly(opts) };
  const url = `${opts.facilitatorUrl.replace(/\/+$/, "")}/settle`;
  const body = JSON.stringify({
    x402Version: opts.payment.version,
    paymentPayload: opts.payment.paymentPayload,
    paymentRequirements: opts.payment.paymentRequirements,
  });
  const headers: Record<string, string> = { "content-type": "application/json", accept: "application/json" };
  if (opts.inject) headers[opts.inject.header] = opts.inject.value;
  const amount = BigInt(opts.payment.amount);
  let last: SettleFailure = "facilitator_unreachable";
  for (let attempt = 1; attempt <= retries + 1; attempt++) {
    if (attempt > 1) await new Promise((r) => setTimeout(r, backoffMs * (attempt - 1)));
    const result = await attemptOnce(url, body, headers, opts.dispatcher, timeoutMs, amount);
    if (result.kind === "done") return { ...result.outcome, attempts: attempt };
    if (result.kind === "final") return { ok: false, attempts: attempt, reason: result.reason };
    last = result.reason;
  }
  return { ok: false, attempts: retries + 1, reason: last };
}

function definedOnly(o: { timeoutMs?: number; retries?: number; backoffMs?: number }) {
  const out: { timeoutMs?: number; retries?: number; backoffMs?: number } = {};
  if (o.timeoutMs !== undefined) out.timeoutMs = o.timeoutMs;
  if (o.retries !== undefined) out.retries = o.retries;
  if (o.backoffMs !== undefined) out.backoffMs = o.backoffMs;
  return out;
}
