import { LIMITS } from "@gw/core";
import type { AgentPrice } from "@gw/db";
import { b64, newPayer, signPayment } from "@gw/fixtures";
import { decodePaymentRequiredHeader } from "@x402/core/http";
import { describe, expect, it } from "vitest";
import {
  challengeBody,
  decodePayment,
  paymentChallenge,
  paymentNonceReservation,
  requirementsFor,
  verifyPayment,
} from "../src/index.ts";

const PAY_TO = "0x1111111111111111111111111111111111111111";
const price: AgentPrice = { amount: "1000", asset: "USDC", network: "base", pay_to: PAY_TO };
const req = requirementsFor({ price, resource: "https://gw.example/v1/proxy/agt_x", description: "Echo" });

async function verifyHeader(header: { name: string; value: string }, p = price, r = req) {
  const decoded = decodePayment({ [header.name.toLowerCase()]: header.value });
  if (!decoded) throw new Error("no payment");
  return verifyPayment({ decoded, price: p, requirements: r });
}

async function expect402(promise: Promise<unknown> | (() => unknown)) {
  let err: unknown;
  try {
    await (typeof promise === "function" ? promise() : promise);
  } catch (e) {
    err = e;
  }
  expect(err).toMatchObject({ kind: "payment_required", message: "payment verification failed" });
}

describe("challenge", () => {
  it("is the documented v1 body exactly, with the v2 header beside it", () => {
    expect(challengeBody(req)).toEqual({
      x402Version: 1,
      error: "X-PAYMENT header is required",
      accepts: [
        {
          scheme: "exact",
          network: "base",
          maxAmountRequired: "1000",
          resource: "https://gw.example/v1/proxy/agt_x",
          description: "Echo",
          mimeType: "application/json",
          payTo: PAY_TO,
          maxTimeoutSeconds: 60,
          asset: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
          extra: { name: "USD Coin", version: "2" },
        },
      ],
    });
    const err = paymentChallenge(req);
    expect(err.kind).toBe("payment_required");
    const header = err.headers["PAYMENT-REQUIRED"] as string;
    expect(decodePaymentRequiredHeader(header)).toEqual({
      x402Version: 2,
      error: "PAYMENT-SIGNATURE header is required",
      resource: {
        url: "https://gw.example/v1/proxy/agt_x",
        description: "Echo",
        mimeType: "application/json",
      },
      accepts: [
        {
          scheme: "exact",
          network: "eip155:8453",
          amount: "1000",
          asset: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
          payTo: PAY_TO,
          maxTimeoutSeconds: 60,
          extra: { name: "USD Coin", version: "2" },
        },
      ],
    });
  });

  it("base-sepolia names its own USDC and EIP-712 name; price.tools overrides per tool", () => {
    const p: AgentPrice = { ...price, network: "base-sepolia", tools: { search: "7" } };
    const r = requirementsFor({ price: p, tool: "search", resource: "r", description: "d" });
    expect(r.v1).toMatchObject({
      network: "base-sepolia",
      maxAmountRequired: "7",
      asset: "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
      extra: { name: "USDC", version: "2" },
    });
    expect(r.v2).toMatchObject({ network: "eip155:84532", amount: "7" });
    expect(requirementsFor({ price: p, tool: "other", resource: "r", description: "d" }).amount).toBe("1000");
    expect(requirementsFor({ price: p, tool: "toString", resource: "r", description: "d" }).amount).toBe(
      "1000",
    );
  });
});

describe("verification", () => {
  const payer = newPayer();
  const terms = { payer, network: "base" as const, payTo: PAY_TO, value: "1000" };

  it("accepts a well-signed payment in both generations and reports its facts", async () => {
    for (const version of [1, 2] as const) {
      const h = await signPayment(version, terms);
      const ok = await verifyHeader(h);
      expect(ok).toMatchObject({
        version,
        network: "base",
        asset: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
        amount: "1000",
        payer: payer.address.toLowerCase(),
        nonce: h.nonce.toLowerCase(),
      });
      expect(ok.paymentRequirements).toEqual(version === 1 ? req.v1 : req.v2);
      expect(paymentNonceReservation(ok)).toEqual({
        kind: "payment_nonce",
        scope: "",
        key: `${payer.address.toLowerCase()}:${h.nonce.toLowerCase()}`,
      });
    }
  });

  it("accepts a value above the price (v1) and a payTo in another letter case", async () => {
    await verifyHeader(
      await signPayment(1, { ...terms, value: "1001", payTo: PAY_TO.toUpperCase().replace("0X", "0x") }),
    );
  });

  const now = BigInt(Math.floor(Date.now() / 1000));
  const bad: Array<[string, 1 | 2, Parameters<typeof signPayment>[1]]> = [
    ["another signer", 1, { ...terms, from: newPayer().address }],
    ["wrong chain", 2, { ...terms, domain: { chainId: 84532 } }],
    [
      "wrong contract",
      1,
      { ...terms, domain: { verifyingContract: "0x036CbD53842c5426634e7929541eC2318f3dCF7e" } },
    ],
    ["wrong EIP-712 name", 2, { ...terms, domain: { name: "USDC" } }],
    ["wrong EIP-712 version", 1, { ...terms, domain: { version: "1" } }],
    ["wrong payTo", 1, { ...terms, payTo: "0x2222222222222222222222222222222222222222" }],
    ["value one below the price", 1, { ...terms, value: "999" }],
    ["value one below the price (v2)", 2, { ...terms, value: "999" }],
    ["expired", 1, { ...terms, validBefore: now - 1n }],
    ["expiring now", 2, { ...terms, validBefore: now }],
    ["not yet valid", 1, { ...terms, validAfter: now + 30n }],
    ["wrong network (v1)", 1, { ...terms, claimedNetwork: "base-sepolia" }],
    ["wrong network (v2)", 2, { ...terms, claimedNetwork: "eip155:84532" }],
    ["wrong scheme (v1)", 1, { ...terms, scheme: "upto" }],
    ["wrong scheme (v2)", 2, { ...terms, scheme: "upto" }],
    ["v2 accepted another amount", 2, { ...terms, accepted: { ...req.v2, amount: "1" } }],
    [
      "v2 accepted another payTo",
      2,
      { ...terms, accepted: { ...req.v2, payTo: "0x2222222222222222222222222222222222222222" } },
    ],
    [
      "v2 accepted another asset",
      2,
      { ...terms, accepted: { ...req.v2, asset: "0x036CbD53842c5426634e7929541eC2318f3dCF7e" } },
    ],
  ];
  for (const [name, version, t] of bad) {
    it(`refuses: ${name}`, async () => {
      await expect402(verifyHeader(await signPayment(version, t)));
    });
  }

  it("refuses a forged signature (one byte flipped) and a payload edited after signing", async () => {
    const h = await signPayment(1, terms);
    const payload = JSON.parse(Buffer.from(h.value, "base64").toString());
    const sig: string = payload.payload.signature;
    const flipped = {
      ...payload,
      payload: {
        ...payload.payload,
        signature: `${sig.slice(0, 10)}${sig[10] === "a" ? "b" : "a"}${sig.slice(11)}`,
      },
    };
    await expect402(verifyHeader({ name: h.name, value: b64(JSON.stringify(flipped)) }));
    const edited = structuredClone(payload);
    edited.payload.authorization.value = "100000";
    await expect402(verifyHeader({ name: h.name, value: b64(JSON.stringify(edited)) }));
  });
});

describe("malformed headers never give anything but the domain 402", () => {
  const cases: Array<[string, Record<string, string | string[]>]> = [
    ["not base64", { "x-payment": "%%%not-base64%%%" }],
    ["base64 with bad padding", { "x-payment": "abc" }],
    ["base64 of invalid UTF-8", { "x-payment": Buffer.from([0xff, 0xfe, 0xfd]).toString("base64") }],
    ["base64 of bad JSON", { "x-payment": b64("{not json") }],
    ["JSON that is not an object", { "x-payment": b64("[1,2,3]") }],
    [
      "wrong version for the header",
      { "x-payment": b64(JSON.stringify({ x402Version: 2, scheme: "exact", network: "base", payload: {} })) },
    ],
    [
      "payload missing the authorization",
      {
        "x-payment": b64(
          JSON.stringify({ x402Version: 1, scheme: "exact", network: "base", payload: { signature: "0x" } }),
        ),
      },
    ],
    [
      "authorization with wrong types",
      {
        "payment-signature": b64(
          JSON.stringify({
            x402Version: 2,
            accepted: {
              scheme: "exact",
              network: "eip155:8453",
              amount: "1",
              asset: "a",
              payTo: "b",
              maxTimeoutSeconds: 60,
            },
            payload: {
              signature: `0x${"1".repeat(130)}`,
              authorization: { from: 1, to: [], value: {}, validAfter: null, validBefore: true, nonce: "x" },
            },
          }),
        ),
      },
    ],
    [
      "a value past 256 bits",
      {
        "x-payment": b64(
          JSON.stringify({
            x402Version: 1,
            scheme: "exact",
            network: "base",
            payload: {
              signature: `0x${"1".repeat(130)}`,
              authorization: {
                from: PAY_TO,
                to: PAY_TO,
                value: "9".repeat(78),
                validAfter: "0",
                validBefore: "1",
                nonce: `0x${"0".repeat(64)}`,
              },
            },
          }),
        ),
      },
    ],
    ["a huge header", { "x-payment": "A".repeat(LIMITS.paymentHeaderMaxChars + 4) }],
    ["both headers at once", { "x-payment": b64("{}"), "payment-signature": b64("{}") }],
    ["a repeated header", { "x-payment": [b64("{}"), b64("{}")] }],
    ["an empty header", { "x-payment": "" }],
  ];
  for (const [name, headers] of cases) {
    it(name, async () => {
      await expect402(() => decodePayment(headers));
    });
  }

  it("no header at all is no payment", () => {
    expect(decodePayment({ "content-type": "application/json" })).toBeNull();
  });

  it("a well-shaped payload with an unrecoverable signature fails verification, not the process", async () => {
    const header = b64(
      JSON.stringify({
        x402Version: 1,
        scheme: "exact",
        network: "base",
        payload: {
          signature: `0x${"0".repeat(130)}`,
          authorization: {
            from: PAY_TO,
            to: PAY_TO,
            value: "1000",
            validAfter: "0",
            validBefore: "99999999999",
            nonce: `0x${"0".repeat(64)}`,
          },
        },
      }),
    );
    await expect402(verifyHeader({ name: "x-payment", value: header }));
  });
});
