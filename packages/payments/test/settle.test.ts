import type { AgentPrice } from "@gw/db";
import { type Facilitator, newPayer, signPayment, startFacilitator } from "@gw/fixtures";
import { createUpstreamDispatcher, ssrfPolicy } from "@gw/upstream";
import { decodePaymentResponseHeader } from "@x402/core/http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  decodePayment,
  paymentResponseHeader,
  requirementsFor,
  type SettleOutcome,
  settlementOf,
  settlePayment,
  upstreamFailed,
  type VerifiedPayment,
  verifyPayment,
} from "../src/index.ts";

const price: AgentPrice = {
  amount: "1000",
  asset: "USDC",
  network: "base",
  pay_to: "0x1111111111111111111111111111111111111111",
};
const req = requirementsFor({ price, resource: "http://gw.test/v1/proxy/agt_1", description: "A" });
const dispatcher = createUpstreamDispatcher({ policy: ssrfPolicy(["127.0.0.0/8"]), connectTimeoutMs: 2_000 });
const guarded = createUpstreamDispatcher({ policy: ssrfPolicy([]), connectTimeoutMs: 2_000 });
let fac: Facilitator;
beforeAll(async () => {
  fac = await startFacilitator();
});
afterAll(async () => {
  await fac.close();
  await dispatcher.close();
  await guarded.close();
});

async function paid(version: 1 | 2): Promise<VerifiedPayment> {
  const h = await signPayment(version, {
    payer: newPayer(),
    network: "base",
    payTo: price.pay_to,
    value: "1000",
  });
  const decoded = decodePayment({ [h.name.toLowerCase()]: h.value });
  if (!decoded) throw new Error("no payment");
  return verifyPayment({ decoded, price, requirements: req });
}

async function settleWith(behaviour: Facilitator["behaviour"], payment?: VerifiedPayment) {
  fac.behaviour = behaviour;
  const before = fac.hits;
  const outcome = await settlePayment({
    facilitatorUrl: `${fac.url}/`,
    payment: payment ?? (await paid(1)),
    dispatcher,
    timeoutMs: 500,
    backoffMs: 5,
  });
  return { outcome, hits: fac.hits - before };
}

describe("settle client against a local facilitator", () => {
  it("posts {x402Version, paymentPayload, paymentRequirements} in the version paid with, with the credential", async () => {
    for (const version of [1, 2] as const) {
      const payment = await paid(version);
      fac.behaviour = "succeed";
      const outcome = await settlePayment({
        facilitatorUrl: fac.url,
        payment,
        dispatcher,
        inject: { header: "x-api-key", value: "fac-secret" },
      });
      expect(outcome).toMatchObject({ ok: true, attempts: 1, transaction: fac.transactions.at(-1) });
      const sent = fac.received.at(-1);
      expect(sent?.url).toBe("/settle");
      expect(sent?.headers["x-api-key"]).toBe("fac-secret");
      expect(sent?.headers["content-type"]).toBe("application/json");
      expect(JSON.parse(sent?.body.toString() ?? "")).toEqual({
        x402Version: version,
        paymentPayload: payment.paymentPayload,
        paymentRequirements: version === 1 ? req.v1 : req.v2,
      });
    }
  });

  it("success: settlement settled, no fee field, operator gets everything", async () => {
    const payment = await paid(2);
    const { outcome, hits } = await settleWith("succeed", payment);
    expect(hits).toBe(1);
    const s = settlementOf(outcome, payment);
    expect(s).toEqual({
      status: "settled",
      tx_hash: fac.transactions.at(-1),
      settled_amount: "1000",
      operator_amount: "1000",
      attempts: 1,
      settled_at: expect.any(String),
    });
    expect(upstreamFailed(s).status).toBe("settled_upstream_failed");
  });

  it("a fee: operator_amount is settled_amount minus the fee", async () => {
    fac.fee = "30";
    const payment = await paid(1);
    const { outcome } = await settleWith("fee", payment);
    expect(settlementOf(outcome, payment)).toMatchObject({
      status: "settled",
      settled_amount: "1000",
      facilitator_fee: "30",
      operator_amount: "970",
    });
  });

  it("success:false is final: one attempt, coarse reason, no facilitator text", async () => {
    const payment = await paid(1);
    const { outcome, hits } = await settleWith("reject", payment);
    expect(hits).toBe(1);
    const s = settlementOf(outcome, payment);
    expect(s).toEqual({ status: "settlement_failed", attempts: 1, reason: "payment_rejected" });
    expect(JSON.stringify(s)).not.toContain(fac.marker);
  });

  it("503 once, then success: settled on the second attempt", async () => {
    const before = fac.hits;
    const fresh = await startFacilitator("fail-once");
    try {
      const outcome = await settlePayment({
        facilitatorUrl: fresh.url,
        payment: await paid(2),
        dispatcher,
        backoffMs: 5,
      });
      expect(outcome).toMatchObject({ ok: true, attempts: 2 });
      expect(fresh.hits).toBe(2);
    } finally {
      await fresh.close();
    }
    expect(fac.hits).toBe(before);
  });

  it("always 5xx: three attempts then facilitator_error", async () => {
    const { outcome, hits } = await settleWith("fail");
    expect(hits).toBe(3);
    expect(outcome).toEqual({ ok: false, attempts: 3, reason: "facilitator_error" });
  });

  it("an unparsable answer is retried, then facilitator_invalid_response", async () => {
    const { outcome, hits } = await settleWith("garbage");
    expect(hits).toBe(3);
    expect(outcome).toEqual({ ok: false, attempts: 3, reason: "facilitator_invalid_response" });
  });

  it("a hang is final after the time-out: never re-submitted", async () => {
    const { outcome, hits } = await settleWith("hang");
    expect(hits).toBe(1);
    expect(outcome).toEqual({ ok: false, attempts: 1, reason: "facilitator_timeout" });
  });

  it("nothing listening: retried, then facilitator_unreachable", async () => {
    const gone = await startFacilitator();
    const url = gone.url;
    await gone.close();
    const outcome = await settlePayment({
      facilitatorUrl: url,
      payment: await paid(1),
      dispatcher,
      backoffMs: 5,
    });
    expect(outcome).toEqual({ ok: false, attempts: 3, reason: "facilitator_unreachable" });
  });

  it("the dial-time SSRF guard refuses a private facilitator once, without retrying", async () => {
    const before = fac.hits;
    const outcome = await settlePayment({
      facilitatorUrl: fac.url,
      payment: await paid(1),
      dispatcher: guarded,
    });
    expect(outcome).toEqual({ ok: false, attempts: 1, reason: "facilitator_unreachable" });
    expect(fac.hits).toBe(before);
  });

  it("the payment response header names the generation and carries only checked values", async () => {
    for (const version of [1, 2] as const) {
      const payment = await paid(version);
      const ok: Extract<SettleOutcome, { ok: true }> = {
        ok: true,
        attempts: 1,
        transaction: `0x${"ab".repeat(32)}`,
      };
      const h = paymentResponseHeader(payment, ok);
      const name = version === 1 ? "X-PAYMENT-RESPONSE" : "PAYMENT-RESPONSE";
      expect(Object.keys(h)).toEqual([name]);
      expect(decodePaymentResponseHeader(h[name] as string)).toEqual({
        success: true,
        transaction: ok.transaction,
        network: version === 1 ? "base" : "eip155:8453",
        payer: payment.payer,
      });
    }
  });
});
