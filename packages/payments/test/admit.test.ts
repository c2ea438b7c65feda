import type { AgentPrice } from "@gw/db";
import { newPayer, signPayment } from "@gw/fixtures";
import { describe, expect, it } from "vitest";
import { admitPayment } from "../src/index.ts";

const price: AgentPrice = {
  amount: "10",
  asset: "USDC",
  network: "base",
  pay_to: "0x1111111111111111111111111111111111111111",
  tools: { costly: "500" },
};
const base = {
  price,
  tool: null,
  resource: "http://gw/v1/proxy/agt_1",
  description: "A",
  headers: {},
  tenantSettles: false,
  settleThenForward: true,
};

describe("admitPayment (step 7)", () => {
  it("unpriced agents pass untouched, whatever the headers", async () => {
    expect(await admitPayment({ ...base, price: null, headers: { "x-payment": "garbage" } })).toBeNull();
  });

  it("no header → the challenge; a settling tenant without settle-then-forward → 503 first", async () => {
    await expect(admitPayment(base)).rejects.toMatchObject({
      kind: "payment_required",
      body: { x402Version: 1 },
    });
    await expect(
      admitPayment({ ...base, tenantSettles: true, settleThenForward: false }),
    ).rejects.toMatchObject({
      kind: "unavailable",
      message: "settlement unavailable",
    });
  });

  it("the per-tool price applies: paying the base price for a costly tool fails", async () => {
    const payer = newPayer();
    const h = await signPayment(1, { payer, network: "base", payTo: price.pay_to, value: "10" });
    const headers = { "x-payment": h.value };
    expect(await admitPayment({ ...base, headers })).toMatchObject({ amount: "10" });
    await expect(admitPayment({ ...base, tool: "costly", headers })).rejects.toMatchObject({
      message: "payment verification failed",
    });
    await expect(admitPayment({ ...base, tool: "costly" })).rejects.toMatchObject({
      body: { accepts: [{ maxAmountRequired: "500" }] },
    });
  });
});
