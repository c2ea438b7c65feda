import secp256k1 from "secp256k1";
import { type Address, type Hex, hexToBytes, keccak256, recoverTypedDataAddress, toBytes } from "viem";
import type { Eip3009 } from "./decode.ts";
import type { UsdcNetwork } from "./networks.ts";

/** EIP-3009's typed data, as USDC defines it. */
export const TRANSFER_WITH_AUTHORIZATION = {
  TransferWithAuthorization: [
    { name: "from", type: "address" },
    { name: "to", type: "address" },
    { name: "value", type: "uint256" },
    { name: "validAfter", type: "uint256" },
    { name: "validBefore", type: "uint256" },
    { name: "nonce", type: "bytes32" },
  ],
} as const;

const TYPE_HASH = keccak256(
  toBytes(
    "TransferWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)",
  ),
  "bytes",
);
const DOMAIN_TYPE_HASH = keccak256(
  toBytes("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)"),
  "bytes",
);
const separators = new Map<number, Uint8Array>();

/** The EIP-712 domain separator of a USDC deployment, computed once per chain. */
function separatorOf(net: UsdcNetwork): Uint8Array {
  let sep = separators.get(net.chainId);
  if (!sep) {
    const buf = new Uint8Array(160);
    buf.set(DOMAIN_TYPE_HASH, 0);
    buf.set(keccak256(toBytes(net.name), "bytes"), 32);
    buf.set(keccak256(toBytes(net.version), "bytes"), 64);
    writeUint(buf, 96, BigInt(net.chainId));
    buf.set(hexToBytes(net.asset as Hex), 140);
    sep = keccak256(buf, "bytes");
    separators.set(net.chainId, sep);
  }
  return sep;
}

function writeUint(buf: Uint8Array, at: number, n: bigint): void {
  for (let i = 31; i >= 0; i--) {
    buf[at + i] = Number(n & 0xffn);
    n >>= 8n;
  }
}

/**
 * The EIP-712 digest of a TransferWithAuthorization over a USDC domain, encoded by hand: the
 * struct is fixed, so the generic encoder's type walk (most of the cost of viem's
 * `hashTypedData`) is not needed; `eip3009.test.ts` holds it equal to viem's.
 */
export function transferDigest(net: UsdcNetwork, auth: Eip3009["authorization"]): Uint8Array {
  const struct = new Uint8Array(224);
  struct.set(TYPE_HASH, 0);
  struct.set(hexToBytes(auth.from as Hex), 44);
  struct.set(hexToBytes(auth.to as Hex), 76);
  writeUint(struct, 96, BigInt(auth.value));
  writeUint(struct, 128, BigInt(auth.validAfter));
  writeUint(struct, 160, BigInt(auth.validBefore));
  struct.set(hexToBytes(auth.nonce as Hex), 192);
  const msg = new Uint8Array(66);
  msg[0] = 0x19;
  msg[1] = 0x01;
  msg.set(separatorOf(net), 2);
  msg.set(keccak256(struct, "bytes"), 34);
  return keccak256(msg, "bytes");
}

/**
 * The address that signed an EIP-3009 authorization over a USDC domain (externally owned
 * accounts; no RPC), or null when the signature does not recover. libsecp256k1 recovers it (the
 * `secp256k1` package's prebuilt binding; its own JS fallback on a platform without one); a
 * signature it refuses goes through viem, so what is accepted never depends on which path ran.
 */
export async function signerOf(net: UsdcNetwork, evm: Eip3009): Promise<string | null> {
  const fast = nativeSigner(net, evm);
  if (fast !== null) return fast;
  try {
    const a = evm.authorization;
    return await recoverTypedDataAddress({
      domain: { name: net.name, version: net.version, chainId: net.chainId, verifyingContract: net.asset },
      types: TRANSFER_WITH_AUTHORIZATION,
      primaryType: "TransferWithAuthorization",
      message: {
        from: a.from as Address,
        to: a.to as Address,
        value: BigInt(a.value),
        validAfter: BigInt(a.validAfter),
        validBefore: BigInt(a.validBefore),
        nonce: a.nonce as Hex,
      },
      signature: evm.signature as Hex,
    });
  } catch {
    return null;
  }
}

function nativeSigner(net: UsdcNetwork, evm: Eip3009): string | null {
  const sig = hexToBytes(evm.signature as Hex);
  let rs: Uint8Array;
  let recid: number;
  if (sig.length === 65) {
    const v = sig[64] as number;
    recid = v >= 27 ? v - 27 : v;
    rs = sig.subarray(0, 64);
  } else {
    // EIP-2098 compact: the top bit of s is the y parity.
    rs = sig.slice(0, 64);
    recid = ((rs[32] as number) >> 7) & 1;
    rs[32] = (rs[32] as number) & 0x7f;
  }
  if (recid !== 0 && recid !== 1) return null;
  try {
    const pub = secp256k1.ecdsaRecover(rs, recid, transferDigest(net, evm.authorization), false);
    const hash = keccak256(pub.subarray(1), "bytes");
    return `0x${Buffer.from(hash.subarray(12)).toString("hex")}`;
  } catch {
    return null;
  }
}
