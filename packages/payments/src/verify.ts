import type { AgentPrice } from "@gw/db";
import type {
  PaymentPayloadV1,
  PaymentPayloadV2,
  PaymentRequirementsV1,
  PaymentRequirementsV2,
} from "@x402/core/schemas";
import type { Requirements } from "./challenge.ts";
import type { DecodedPayment } from "./decode.ts";
import { signerOf } from "./eip3009.ts";
import { paymentFailed } from "./errors.ts";
import { NETWORKS } from "./networks.ts";

/**
 * A payment that passed every local check. `payer` and `nonce` are lower-case: together they name
 * the one on-chain authorization, the key of the deployment-wide replay guard. The facilitator is
 * sent `paymentPayload` and `paymentRequirements` in the generation the caller paid with.
 */
export type VerifiedPayment =
  | (PaymentFacts & {
      version: 1;
      paymentPayload: PaymentPayloadV1;
      paymentRequirements: PaymentRequirementsV1;
    })
  | (PaymentFacts & {
      version: 2;
      paymentPayload: PaymentPayloadV2;
      paymentRequirements: PaymentRequirementsV2;
    });

type PaymentFacts = {
  network: AgentPrice["network"];
  /** The USDC contract address. */
  asset: string;
  /** The authorized value (what the facilitator transfers): at least the price. */
  amount: string;
  payer: string;
  nonce: string;
};

const sameAddress = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/**
 * Why a payment was refused, in the x402 specification's error codes where it has one (its
 * `invalidReason` values; `invalid_asset` is ours). The HTTP path never shows it (one coarse 402);
 * the MCP transport names it in the payment-required result's `error`.
 */
export type PaymentRefusal =
  | "invalid_payload"
  | "invalid_x402_version"
  | "invalid_scheme"
  | "invalid_network"
  | "invalid_asset"
  | "invalid_exact_evm_payload_recipient_mismatch"
  | "invalid_exact_evm_payload_authorization_value"
  | "invalid_exact_evm_payload_authorization_valid_after"
  | "invalid_exact_evm_payload_authorization_valid_before"
  | "invalid_exact_evm_payload_signature"
  | "invalid_exact_evm_nonce_already_used";

/** The first term the payer did not agree to (scheme, network, asset, payee, amount), or null. */
function termsProblem(decoded: DecodedPayment, price: AgentPrice, req: Requirements): PaymentRefusal | null {
  const net = NETWORKS[price.network];
  if (decoded.version === 1) {
    if (decoded.payload.scheme !== "exact") return "invalid_scheme";
    return decoded.payload.network === net.v1 ? null : "invalid_network";
  }
  const accepted = decoded.payload.accepted;
  if (accepted.scheme !== "exact") return "invalid_scheme";
  if (accepted.network !== net.caip2) return "invalid_network";
  if (!sameAddress(accepted.asset, net.asset)) return "invalid_asset";
  if (!sameAddress(accepted.payTo, price.pay_to)) return "invalid_exact_evm_payload_recipient_mismatch";
  return accepted.amount === req.amount ? null : "invalid_exact_evm_payload_authorization_value";
}

/**
 * Verifies a decoded payment against the call's terms, locally: scheme and network, `to` = payTo,
 * `value` ≥ the price, `validAfter` ≤ now < `validBefore`, and the EIP-712 TransferWithAuthorization
 * signature over the USDC domain of the chain recovering to `from` (viem, no RPC: externally owned
 * accounts only; libsecp256k1 where it loads, eip3009.ts). Any failure throws the one 402 `payment verification failed`.
 */
export async function verifyPayment(opts: VerifyOptions): Promise<VerifiedPayment> {
  const checked = await checkPayment(opts);
  if (typeof checked === "string") throw paymentFailed();
  return checked;
}

type VerifyOptions = {
  decoded: DecodedPayment;
  price: AgentPrice;
  requirements: Requirements;
  /** Unix seconds; a parameter so tests can pin it. */
  now?: number;
};

/** `verifyPayment`'s checks, in its order, answering the refusal instead of throwing. */
export async function checkPayment(opts: VerifyOptions): Promise<VerifiedPayment | PaymentRefusal> {
  const { decoded, price, requirements } = opts;
  const net = NETWORKS[price.network];
  const auth = decoded.evm.authorization;
  const now = BigInt(opts.now ?? Math.floor(Date.now() / 1000));
  const terms = termsProblem(decoded, price, requirements);
  if (terms !== null) return terms;
  if (!sameAddress(auth.to, price.pay_to)) return "invalid_exact_evm_payload_recipient_mismatch";
  if (BigInt(auth.value) < BigInt(requirements.amount))
    return "invalid_exact_evm_payload_authorization_value";
  if (BigInt(auth.validAfter) > now) return "invalid_exact_evm_payload_authorization_valid_after";
  if (now >= BigInt(auth.validBefore)) return "invalid_exact_evm_payload_authorization_valid_before";
  const signer = await signerOf(net, decoded.evm);
  if (signer === null) return "invalid_exact_evm_payload_signature";
  if (!sameAddress(signer, auth.from)) return "invalid_exact_evm_payload_signature";
  const facts: PaymentFacts = {
    network: price.network,
    asset: net.asset,
    amount: auth.value,
    payer: auth.from.toLowerCase(),
    nonce: auth.nonce.toLowerCase(),
  };
  return decoded.version === 1
    ? { ...facts, version: 1, paymentPayload: decoded.payload, paymentRequirements: requirements.v1 }
    : { ...facts, version: 2, paymentPayload: decoded.payload, paymentRequirements: requirements.v2 };
}

/** The replay-guard reservation of a verified payment (one per on-chain authorization). */
export function paymentNonceReservation(p: Pick<VerifiedPayment, "payer" | "nonce">) {
  return { kind: "payment_nonce" as const, scope: "", key: `${p.payer}:${p.nonce}` };
}
