import { describe, expect, it } from "vitest";
import { downstreamResponseHeaders, forwardableHeaders } from "../src/headers.ts";

describe("payment and gateway headers", () => {
  it("neither payment header reaches the upstream", () => {
    const out = forwardableHeaders(
      ["X-PAYMENT", "a", "Payment-Signature", "b", "Accept", "application/json", "X-Gateway-Agent-ID", "x"],
      { keepContentLength: false },
    );
    expect(out).toEqual(["Accept", "application/json"]);
  });

  it("an upstream cannot set the gateway's own response headers", () => {
    const out = downstreamResponseHeaders({
      "content-type": "application/json",
      "x-payment-response": "forged",
      "payment-response": "forged",
      "x-gateway-invocation-id": "inv_forged",
      "payment-required": "kept",
    });
    expect(out).toEqual({ "content-type": "application/json", "payment-required": "kept" });
  });
});
