import { describe, expect, it } from "vitest";
import { downstreamResponseHeaders, upstreamRequestHeaders } from "../src/headers.ts";

const base = { invocationId: "inv_1", agentId: "agt_1", tenantId: "t1", keepContentLength: false };
const same = (v: string) => v;

describe("downstream response headers", () => {
  it("drops the gateway's own headers whatever their case, and hop-by-hop ones", () => {
    const out = downstreamResponseHeaders(
      {
        "content-type": "application/json",
        "x-gateway-invocation-id": "inv_forged",
        "x-gateway-policy-warning": "forged",
        "X-Gateway-Anything": "forged",
        "x-payment-response": "forged",
        "payment-response": "forged",
        "transfer-encoding": "chunked",
        "x-upstream": "kept",
      },
      same,
    );
    expect(out).toEqual(["content-type", "application/json", "x-upstream", "kept"]);
  });

  it("drops what the upstream's Connection header names, keeps every value of a repeated header, maps each value", () => {
    const out = downstreamResponseHeaders(
      {
        connection: "keep-alive, x-private",
        "x-private": "dropped",
        "set-cookie": ["a=1", "b=2"],
        "content-length": "5",
        "x-secret": "has s3cret in it",
      },
      (v) => v.replace("s3cret", "[REDACTED]"),
      "content-length",
    );
    expect(out).toEqual(["set-cookie", "a=1", "set-cookie", "b=2", "x-secret", "has [REDACTED] in it"]);
    expect(downstreamResponseHeaders({ connection: "keep-alive", "content-length": "5" }, same)).toEqual([
      "content-length",
      "5",
    ]);
  });
});

describe("upstream request headers", () => {
  const pairs = (flat: string[]) => {
    const out: Array<[string, string]> = [];
    for (let i = 0; i < flat.length; i += 2) out.push([flat[i] as string, flat[i + 1] as string]);
    return out;
  };

  it("appends the caller's address to X-Forwarded-For, after what the caller sent", () => {
    const out = pairs(
      upstreamRequestHeaders(["X-Forwarded-For", "203.0.113.7", "x-forwarded-for", "198.51.100.1"], {
        ...base,
        clientAddress: "192.0.2.10",
      }),
    );
    expect(out.filter(([n]) => n.toLowerCase() === "x-forwarded-for")).toEqual([
      ["x-forwarded-for", "203.0.113.7, 198.51.100.1, 192.0.2.10"],
    ]);
    const fresh = pairs(upstreamRequestHeaders([], { ...base, clientAddress: "::1" }));
    expect(fresh).toContainEqual(["x-forwarded-for", "::1"]);
  });

  it("drops forged x-gateway-* request headers and adds its own", () => {
    const out = pairs(upstreamRequestHeaders(["X-Gateway-Tenant-ID", "other", "accept", "*/*"], base));
    expect(out).toEqual([
      ["accept", "*/*"],
      ["x-gateway-invocation-id", "inv_1"],
      ["x-gateway-agent-id", "agt_1"],
      ["x-gateway-tenant-id", "t1"],
    ]);
  });
});

describe("payment headers", () => {
  it("neither payment header reaches the upstream; PAYMENT-REQUIRED from an upstream passes back", () => {
    const out = upstreamRequestHeaders(["X-PAYMENT", "a", "Payment-Signature", "b", "accept", "*/*"], base);
    expect(out.filter((_, i) => i % 2 === 0).map((n) => n.toLowerCase())).not.toContain("x-payment");
    expect(out.filter((_, i) => i % 2 === 0).map((n) => n.toLowerCase())).not.toContain("payment-signature");
    expect(downstreamResponseHeaders({ "payment-required": "kept" }, same)).toEqual([
      "payment-required",
      "kept",
    ]);
  });
});
