// @stores once: pure logic, no store (payload-v2.ts against @x402/core's schema).
import { PaymentPayloadV2Schema } from "@x402/core/schemas";
import { describe, expect, it } from "vitest";
import { decodePaymentObject } from "../src/index.ts";
import { readPaymentPayloadV2 } from "../src/payload-v2.ts";

const valid = () => ({
  x402Version: 2,
  resource: { url: "mcp://tool/search", description: "Tool: search", mimeType: "application/json" },
  accepted: {
    scheme: "exact",
    network: "eip155:84532",
    amount: "1000",
    asset: "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
    payTo: "0x5555555555555555555555555555555555555555",
    maxTimeoutSeconds: 60,
    extra: { name: "USDC", version: "2" },
  },
  payload: {
    signature: `0x${"ab".repeat(65)}`,
    authorization: {
      from: "0x76ED2FDDdacc7E8c68C11d3b73a1527045EBaDE1",
      to: "0x5555555555555555555555555555555555555555",
      value: "1000",
      validAfter: "0",
      validBefore: "1796664131",
      nonce: `0x${"12".repeat(32)}`,
    },
  },
});

type P = Record<string, unknown> & {
  resource: Record<string, unknown>;
  accepted: Record<string, unknown>;
};
/** A valid payload with one change. */
const with_ = (change: (p: P) => void): unknown => {
  const p = valid() as unknown as P;
  change(p);
  return p;
};

const cases: Array<[string, unknown]> = [
  ["valid", valid()],
  ["null", null],
  ["array", [valid()]],
  ["string", "x"],
  ["number", 2],
  ["undefined", undefined],
  ["version 1", with_((p) => (p.x402Version = 1))],
  ["version as string", with_((p) => (p.x402Version = "2"))],
  ["no version", with_((p) => delete p.x402Version)],
  ["unknown top-level key", with_((p) => (p.extra = { a: 1 }))],
  ["no resource", with_((p) => Reflect.deleteProperty(p, "resource"))],
  ["null resource", with_((p) => (p.resource = null as never))],
  ["resource array", with_((p) => (p.resource = [] as never))],
  ["resource without url", with_((p) => delete p.resource.url)],
  ["resource empty url", with_((p) => (p.resource.url = ""))],
  ["resource bare url", with_((p) => (p.resource = { url: "u" }))],
  ["resource null description", with_((p) => (p.resource.description = null))],
  ["resource empty description", with_((p) => (p.resource.description = ""))],
  ["resource number description", with_((p) => (p.resource.description = 5))],
  ["resource null mimeType", with_((p) => (p.resource.mimeType = null))],
  ["resource serviceName", with_((p) => (p.resource.serviceName = "svc"))],
  ["resource empty serviceName", with_((p) => (p.resource.serviceName = ""))],
  ["resource long serviceName", with_((p) => (p.resource.serviceName = "x".repeat(33)))],
  ["resource 32-char serviceName", with_((p) => (p.resource.serviceName = "x".repeat(32)))],
  ["resource control char serviceName", with_((p) => (p.resource.serviceName = "a\u0001"))],
  ["resource non-ascii serviceName", with_((p) => (p.resource.serviceName = "é"))],
  ["resource null serviceName", with_((p) => (p.resource.serviceName = null))],
  ["resource tags", with_((p) => (p.resource.tags = ["a", "b"]))],
  ["resource no tags", with_((p) => (p.resource.tags = []))],
  ["resource six tags", with_((p) => (p.resource.tags = ["a", "b", "c", "d", "e", "f"]))],
  ["resource empty tag", with_((p) => (p.resource.tags = [""]))],
  ["resource number tag", with_((p) => (p.resource.tags = [1]))],
  ["resource tags string", with_((p) => (p.resource.tags = "a"))],
  ["resource null tags", with_((p) => (p.resource.tags = null))],
  ["resource iconUrl", with_((p) => (p.resource.iconUrl = "https://x"))],
  ["resource long iconUrl", with_((p) => (p.resource.iconUrl = "x".repeat(2049)))],
  ["resource 2048 iconUrl", with_((p) => (p.resource.iconUrl = "x".repeat(2048)))],
  ["resource unknown key", with_((p) => (p.resource.other = 1))],
  ["no accepted", with_((p) => Reflect.deleteProperty(p, "accepted"))],
  ["accepted array", with_((p) => (p.accepted = [] as never))],
  ["empty scheme", with_((p) => (p.accepted.scheme = ""))],
  ["number scheme", with_((p) => (p.accepted.scheme = 1))],
  ["short network", with_((p) => (p.accepted.network = "a:"))],
  ["network without colon", with_((p) => (p.accepted.network = "base"))],
  ["three-char network", with_((p) => (p.accepted.network = "a:b"))],
  ["empty amount", with_((p) => (p.accepted.amount = ""))],
  ["number amount", with_((p) => (p.accepted.amount = 1000))],
  ["no asset", with_((p) => delete p.accepted.asset)],
  ["empty payTo", with_((p) => (p.accepted.payTo = ""))],
  ["zero timeout", with_((p) => (p.accepted.maxTimeoutSeconds = 0))],
  ["negative timeout", with_((p) => (p.accepted.maxTimeoutSeconds = -1))],
  ["fractional timeout", with_((p) => (p.accepted.maxTimeoutSeconds = 1.5))],
  ["string timeout", with_((p) => (p.accepted.maxTimeoutSeconds = "60"))],
  ["NaN timeout", with_((p) => (p.accepted.maxTimeoutSeconds = Number.NaN))],
  ["infinite timeout", with_((p) => (p.accepted.maxTimeoutSeconds = Number.POSITIVE_INFINITY))],
  ["no extra", with_((p) => delete p.accepted.extra)],
  ["null extra", with_((p) => (p.accepted.extra = null))],
  ["array extra", with_((p) => (p.accepted.extra = []))],
  ["string extra", with_((p) => (p.accepted.extra = "x"))],
  ["accepted unknown key", with_((p) => (p.accepted.more = true))],
  ["no payload", with_((p) => delete p.payload)],
  ["null payload", with_((p) => (p.payload = null))],
  ["array payload", with_((p) => (p.payload = []))],
  ["empty payload", with_((p) => (p.payload = {}))],
  ["payload with __proto__", with_((p) => (p.payload = JSON.parse('{"__proto__":{"x":1},"a":1}')))],
  ["extra with __proto__", with_((p) => (p.accepted.extra = JSON.parse('{"__proto__":{"x":1},"b":2}')))],
  ["extensions", with_((p) => (p.extensions = { bazaar: { a: 1 } }))],
  ["null extensions", with_((p) => (p.extensions = null))],
  ["array extensions", with_((p) => (p.extensions = []))],
  ["string extensions", with_((p) => (p.extensions = "x"))],
];

describe("the v2 payment payload read by hand", () => {
  it.each(cases)("%s: accepted and read exactly as @x402/core's schema reads it", (_, input) => {
    const schema = PaymentPayloadV2Schema.safeParse(input);
    const read = readPaymentPayloadV2(input);
    if (!schema.success) {
      expect(read).toBeNull();
      return;
    }
    // The same members (an `undefined` where the schema leaves one), in the same order.
    expect(read).toStrictEqual(schema.data);
    expect(JSON.stringify(read)).toBe(JSON.stringify(schema.data));
    expect(Object.keys(read ?? {})).toEqual(Object.keys(schema.data));
  });

  it("reads a copy: the members the verifier keeps are not the caller's objects", () => {
    const input = valid();
    const read = readPaymentPayloadV2(input);
    expect(read?.payload).not.toBe(input.payload);
    expect(read?.accepted).not.toBe(input.accepted);
    expect(decodePaymentObject(input)?.payload).toStrictEqual(PaymentPayloadV2Schema.parse(input));
  });
});
