import type { AgentPrice } from "@gw/db";
import { newPayer } from "@gw/fixtures";
import { x402Client, x402HTTPClient } from "@x402/core/client";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { describe, expect, it } from "vitest";
import {
  challengeBody,
  decodePayment,
  paymentChallenge,
  requirementsFor,
  verifyPayment,
} from "../src/index.ts";

const price: AgentPrice = {
  amount: "2500",
  asset: "USDC",
  network: "base-sepolia",
  pay_to: "0x3333333333333333333333333333333333333333",
};
const req = requirementsFor({ price, resource: "http://gw.test/v1/proxy/agt_1", description: "Agent" });

describe("the official @x402 client signs what the gateway verifies", () => {
  it("v2 from the PAYMENT-REQUIRED header, v1 from the body", async () => {
    const payer = newPayer();
    const http = new x402HTTPClient(registerExactEvmScheme(new x402Client(), { signer: payer }));
    const challenge = paymentChallenge(req);
    const header = challenge.headers["PAYMENT-REQUIRED"] as string;

    const fromHeader = http.getPaymentRequiredResponse((n) => (n === "PAYMENT-REQUIRED" ? header : null));
    const v2 = http.encodePaymentSignatureHeader(await http.createPaymentPayload(fromHeader));
    expect(Object.keys(v2)).toEqual(["PAYMENT-SIGNATURE"]);

    const fromBody = http.getPaymentRequiredResponse(() => null, challengeBody(req));
    const v1 = http.encodePaymentSignatureHeader(await http.createPaymentPayload(fromBody));
    expect(Object.keys(v1)).toEqual(["X-PAYMENT"]);

    for (const h of [v2, v1]) {
      const lower = Object.fromEntries(Object.entries(h).map(([k, val]) => [k.toLowerCase(), val]));
      const decoded = decodePayment(lower);
      if (!decoded) throw new Error("no payment decoded");
      const ok = await verifyPayment({ decoded, price, requirements: req });
      expect(ok.payer).toBe(payer.address.toLowerCase());
      expect(ok.amount).toBe("2500");
    }
  });
});
