import type { Address } from "viem";

/** An agent price names one of these networks (docs/interface.md, Agent: `base` or `base-sepolia`). */
export type PriceNetwork = "base" | "base-sepolia";

export type UsdcNetwork = {
  /** The v1 network name, as the agent price and the v1 challenge spell it. */
  v1: PriceNetwork;
  /** The CAIP-2 id the v2 protocol uses. */
  caip2: `eip155:${number}`;
  chainId: number;
  /** The USDC contract: the asset of the challenge and the EIP-712 `verifyingContract`. */
  asset: Address;
  /** The EIP-712 domain name and version of that contract, sent in `extra` so clients sign offline. */
  name: string;
  version: string;
};

/** As docs/payments.md lists them: the USDC deployments a price may name. */
export const NETWORKS: Readonly<Record<PriceNetwork, UsdcNetwork>> = Object.freeze({
  base: {
    v1: "base",
    caip2: "eip155:8453",
    chainId: 8453,
    asset: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
    name: "USD Coin",
    version: "2",
  },
  "base-sepolia": {
    v1: "base-sepolia",
    caip2: "eip155:84532",
    chainId: 84532,
    asset: "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
    name: "USDC",
    version: "2",
  },
});
