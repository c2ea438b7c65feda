import { newPayer, type TestApp } from "@gw/testkit";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { x402Client } from "@x402/core/client";
import type { PaymentPayload, PaymentRequired } from "@x402/core/types";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { expect } from "vitest";
import type { Caller } from "../helpers.ts";

export const PAY_TO = "0x5555555555555555555555555555555555555555";
export const SEPOLIA_USDC = "0x036CbD53842c5426634e7929541eC2318f3dCF7e";

/** The official MCP SDK client on the gateway's streaming path, with the caller's bearer. */
export async function connect(gw: TestApp, call: Caller, agentId: string): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(`${gw.url}/v1/proxy/${agentId}/stream`), {
    requestInit: { headers: { Authorization: `Bearer ${call.token}` } },
  });
  const client = new Client({ name: "gw-x402-mcp-test", version: "1.0.0" });
  await client.connect(transport);
  return client;
}

/** A payer with the official x402 client: builds `x402/payment` from a payment-required result. */
export function payerClient(opts: { anyAsset?: boolean } = {}) {
  const account = newPayer();
  // `anyAsset`: a payer whose client signs for any token (to send the gateway a wrong asset).
  const base = opts.anyAsset
    ? x402Client.fromConfig({ schemes: [], spendControls: false })
    : new x402Client();
  const x402 = registerExactEvmScheme(base, { signer: account });
  return {
    account,
    /** Pays for `required`, optionally after changing the terms the payer agrees to (bad payments). */
    pay: (required: PaymentRequired, change: (accepts: Record<string, unknown>) => void = () => {}) => {
      const copy = structuredClone(required);
      change(copy.accepts[0] as unknown as Record<string, unknown>);
      return x402.createPaymentPayload(copy) as Promise<PaymentPayload>;
    },
  };
}

type ToolResult = {
  isError?: boolean;
  structuredContent?: Record<string, unknown>;
  content?: Array<{ type: string; text?: string }>;
  _meta?: Record<string, unknown>;
};

/** Asserts the transport's payment-required result and returns its `PaymentRequired`. */
export function paymentRequiredOf(result: unknown, error: string, tool: string): PaymentRequired {
  const r = result as ToolResult;
  expect(r.isError).toBe(true);
  const required = r.structuredContent as unknown as PaymentRequired;
  expect(required).toMatchObject({
    x402Version: 2,
    error,
    resource: { url: `mcp://tool/${tool}`, mimeType: "application/json" },
    accepts: [
      { scheme: "exact", network: "eip155:84532", asset: SEPOLIA_USDC, payTo: PAY_TO, maxTimeoutSeconds: 60 },
    ],
  });
  // Clients that read text only get the transport's `x402/error` wrapper with the same object.
  const text = r.content?.[0]?.text ?? "";
  expect(JSON.parse(text)).toEqual({ "x402/error": { code: 402, message: error, data: required } });
  return required;
}

export function textOf(result: unknown): string {
  return (result as ToolResult).content?.[0]?.text ?? "";
}

export function paymentResponseOf(result: unknown): Record<string, unknown> | undefined {
  return (result as ToolResult)._meta?.["x402/payment-response"] as Record<string, unknown> | undefined;
}
