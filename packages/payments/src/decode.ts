import { LIMITS } from "@gw/core";
import type { PaymentPayloadV1, PaymentPayloadV2 } from "@x402/core/schemas";
import { PaymentPayloadV1Schema, PaymentPayloadV2Schema } from "@x402/core/schemas";
import * as v from "valibot";
import { paymentFailed } from "./errors.ts";

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
const MAX_UINT256 = (1n << 256n) - 1n;

// abortPipeEarly: valibot runs a pipe's later actions after an earlier one failed, so without it
// `BigInt` would see "1.5" or "1e3" and throw out of safeParse (a 500, not a 402).
const Uint256 = v.config(
  v.pipe(
    v.string(),
    v.regex(/^[0-9]{1,78}$/),
    v.check((s) => BigInt(s) <= MAX_UINT256),
  ),
  { abortPipeEarly: true },
);
const Address = v.pipe(v.string(), v.regex(/^0x[0-9a-fA-F]{40}$/));

/**
 * The `exact` EVM payload of both generations: an EIP-3009 TransferWithAuthorization and its
 * signature (65 bytes, or 64 in EIP-2098 compact form). Written here: @x402/core leaves `payload`
 * untyped and @x402/evm's types carry no runtime schema.
 */
export const Eip3009Payload = v.object({
  signature: v.pipe(v.string(), v.regex(/^0x([0-9a-fA-F]{128}|[0-9a-fA-F]{130})$/)),
  authorization: v.object({
    from: Address,
    to: Address,
    value: Uint256,
    validAfter: Uint256,
    validBefore: Uint256,
    nonce: v.pipe(v.string(), v.regex(/^0x[0-9a-fA-F]{64}$/)),
  }),
});
export type Eip3009 = v.InferOutput<typeof Eip3009Payload>;

/** A payment header that parsed: the generation it came in, the protocol object, its EVM payload. */
export type DecodedPayment =
  | { version: 1; payload: PaymentPayloadV1; evm: Eip3009 }
  | { version: 2; payload: PaymentPayloadV2; evm: Eip3009 };

type HeaderValue = string | string[] | undefined;

function one(value: HeaderValue): string | undefined {
  if (Array.isArray(value)) {
    if (value.length > 1) throw paymentFailed();
    return value[0];
  }
  return value;
}

function parseBase64Json(raw: string): unknown {
  const s = raw.trim();
  if (s.length === 0 || s.length > LIMITS.paymentHeaderMaxChars || s.length % 4 !== 0 || !BASE64.test(s)) {
    throw paymentFailed();
  }
  try {
    const text = new TextDecoder("utf-8", { fatal: true }).decode(Buffer.from(s, "base64"));
    return JSON.parse(text);
  } catch {
    throw paymentFailed();
  }
}

/**
 * Reads a v2 payment object as the MCP transport carries it (`params._meta["x402/payment"]`): the
 * same checks as the `PAYMENT-SIGNATURE` header's JSON (@x402/core's v2 schema, then the EVM
 * payload's). Null when it is not one.
 */
export function decodePaymentObject(json: unknown): Extract<DecodedPayment, { version: 2 }> | null {
  const parsed = PaymentPayloadV2Schema.safeParse(json);
  if (!parsed.success) return null;
  const payload = parsed.data;
  const evm = v.safeParse(Eip3009Payload, payload.payload);
  if (!evm.success) return null;
  return { version: 2, payload, evm: evm.output };
}

/**
 * Reads the payment a call carries: `PAYMENT-SIGNATURE` (v2) or `X-PAYMENT` (v1), from lower-case
 * Node headers. Returns null when neither is present. Anything malformed — bad base64, bad UTF-8,
 * bad JSON, a wrong shape, out-of-range numbers, an oversized or repeated header, both headers at
 * once, a header whose version disagrees with its name — throws the one domain 402, never anything
 * else.
 */
export function decodePayment(headers: Record<string, HeaderValue>): DecodedPayment | null {
  const v2 = one(headers["payment-signature"]);
  const v1 = one(headers["x-payment"]);
  if (v1 === undefined && v2 === undefined) return null;
  if (v1 !== undefined && v2 !== undefined) throw paymentFailed();
  const json = parseBase64Json((v2 ?? v1) as string);
  if (v2 !== undefined) {
    const decoded = decodePaymentObject(json);
    if (decoded === null) throw paymentFailed();
    return decoded;
  }
  const parsed = PaymentPayloadV1Schema.safeParse(json);
  if (!parsed.success) throw paymentFailed();
  const evm = v.safeParse(Eip3009Payload, parsed.data.payload);
  if (!evm.success) throw paymentFailed();
  return { version: 1, payload: parsed.data, evm: evm.output };
}
