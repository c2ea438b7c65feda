import { randomBytes } from "node:crypto";
import type { Address, Hex, LocalAccount } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";

/**
 * A payer with a fresh random key that exists only in this test process; never printed. `testKey`
 * is kept so a test can sweep responses and logs for it.
 */
export function newPayer(): LocalAccount & { testKey: Hex } {
  const key = generatePrivateKey();
  return Object.assign(privateKeyToAccount(key), { testKey: key });
}

export const USDC = {
  base: {
    caip2: "eip155:8453",
    chainId: 8453,
    asset: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
    name: "USD Coin",
  },
  "base-sepolia": {
    caip2: "eip155:84532",
    chainId: 84532,
    asset: "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
    name: "USDC",
  },
} as const;

export type PaymentTerms = {
  payer: LocalAccount;
  network: keyof typeof USDC;
  payTo: string;
  value: string;
  validAfter?: bigint;
  validBefore?: bigint;
  nonce?: Hex;
  /** Overrides of the EIP-712 domain, to sign over the wrong chain, contract or name. */
  domain?: Partial<{ name: string; version: string; chainId: number; verifyingContract: Address }>;
  /** Overrides of the signed `from` (another signer's address in the message). */
  from?: Address;
  scheme?: string;
  /** v1 network name / v2 CAIP-2 id written in the payload (the signature still uses `network`). */
  claimedNetwork?: string;
  /** v2 only: the `accepted` requirements the payer echoes (defaults to matching terms). */
  accepted?: Record<string, unknown>;
};

const TYPES = {
  TransferWithAuthorization: [
    { name: "from", type: "address" },
    { name: "to", type: "address" },
    { name: "value", type: "uint256" },
    { name: "validAfter", type: "uint256" },
    { name: "validBefore", type: "uint256" },
    { name: "nonce", type: "bytes32" },
  ],
} as const;

/**
 * Signs an EIP-3009 TransferWithAuthorization like an x402 client and returns the payment header
 * for the given generation: `{name: "X-PAYMENT" | "PAYMENT-SIGNATURE", value: base64 JSON}`.
 */
export async function signPayment(
  version: 1 | 2,
  t: PaymentTerms,
): Promise<{ name: string; value: string; nonce: Hex; payload: unknown }> {
  const usdc = USDC[t.network];
  const now = BigInt(Math.floor(Date.now() / 1000));
  const authorization = {
    from: t.from ?? t.payer.address,
    to: t.payTo as Address,
    value: BigInt(t.value),
    validAfter: t.validAfter ?? now - 600n,
    validBefore: t.validBefore ?? now + 60n,
    nonce: t.nonce ?? (`0x${randomBytes(32).toString("hex")}` as Hex),
  };
  const signature = await t.payer.signTypedData({
    domain: {
      name: usdc.name,
      version: "2",
      chainId: usdc.chainId,
      verifyingContract: usdc.asset,
      ...t.domain,
    },
    types: TYPES,
    primaryType: "TransferWithAuthorization",
    message: authorization,
  });
  const evm = {
    signature,
    authorization: {
      from: authorization.from,
      to: authorization.to,
      value: authorization.value.toString(),
      validAfter: authorization.validAfter.toString(),
      validBefore: authorization.validBefore.toString(),
      nonce: authorization.nonce,
    },
  };
  const scheme = t.scheme ?? "exact";
  const payload =
    version === 1
      ? { x402Version: 1, scheme, network: t.claimedNetwork ?? t.network, payload: evm }
      : {
          x402Version: 2,
          accepted: t.accepted ?? {
            scheme,
            network: t.claimedNetwork ?? usdc.caip2,
            amount: t.value,
            asset: usdc.asset,
            payTo: t.payTo,
            maxTimeoutSeconds: 60,
            extra: { name: usdc.name, version: "2" },
          },
          payload: evm,
        };
  const value = Buffer.from(JSON.stringify(payload)).toString("base64");
  return {
    name: version === 1 ? "X-PAYMENT" : "PAYMENT-SIGNATURE",
    value,
    nonce: authorization.nonce,
    payload,
  };
}

export const b64 = (s: string | Buffer) => Buffer.from(s).toString("base64");

/** A fresh private key for a payer in another process (passed through its environment, never printed). */
export const newPayerKey = (): Hex => generatePrivateKey();
