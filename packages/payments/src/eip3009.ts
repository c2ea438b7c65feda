import secp256k1 from "secp256k1";
import { type Address, type Hex, keccak256, recoverTypedDataAddress, toBytes } from "viem";
import type { Eip3009 } from "./decode.ts";
import { keccak } from "./keccak.ts";
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
// Keyed by the network object (NETWORKS' entries are frozen): its chain, contract, name and version.
const separators = new WeakMap<UsdcNetwork, Uint8Array>();

/** The EIP-712 domain separator of a USDC deployment, computed once per network. */
function separatorOf(net: UsdcNetwork): Uint8Array {
  let sep = separators.get(net);
  if (!sep) {
    const buf = Buffer.alloc(160);
    buf.set(DOMAIN_TYPE_HASH, 0);
    buf.set(keccak256(toBytes(net.name), "bytes"), 32);
    buf.set(keccak256(toBytes(net.version), "bytes"), 64);
    writeUint(buf, 96, String(net.chainId));
    writeHex(buf, 140, net.asset, 20);
    sep = keccak256(buf, "bytes");
    separators.set(net, sep);
  }
  return sep;
}

/** `0x`-prefixed hex of exactly `bytes` bytes, written at `at` (decode.ts checked the shape; this holds it). */
function writeHex(buf: Buffer, at: number, hex: string, bytes: number): void {
  const ok = hex.length === 2 + 2 * bytes && hex.startsWith("0x");
  if (!ok || buf.write(hex.slice(2), at, bytes, "hex") !== bytes) {
    throw new RangeError("not a hex string of the expected length");
  }
}

/** A decimal uint256 as its 32 big-endian bytes (through BigInt's hex: no per-byte BigInt arithmetic). */
function writeUint(buf: Buffer, at: number, decimal: string): void {
  const hex = BigInt(decimal).toString(16);
  if (hex.length > 64 || decimal.startsWith("-")) throw new RangeError("not a uint256");
  writeHex(buf, at, `0x${hex.padStart(64, "0")}`, 32);
}

// The struct and message are encoded in two buffers reused by every call (the encoding is
// synchronous and hashed at once); the type hash and the zero padding of the addresses never change.
const struct = Buffer.alloc(224);
struct.set(TYPE_HASH, 0);
const message = Buffer.alloc(66);
message[0] = 0x19;
message[1] = 0x01;

/**
 * The EIP-712 digest of a TransferWithAuthorization over a USDC domain, encoded by hand: the
 * struct is fixed, so the generic encoder's type walk (most of the cost of viem's
 * `hashTypedData`) is not needed, and the domain separator is computed once per network: per call
 * only the struct hash and the final hash remain. `eip3009.test.ts` holds it equal to viem's.
 */
export function transferDigest(net: UsdcNetwork, auth: Eip3009["authorization"]): Uint8Array {
  writeHex(struct, 44, auth.from, 20);
  writeHex(struct, 76, auth.to, 20);
  writeUint(struct, 96, auth.value);
  writeUint(struct, 128, auth.validAfter);
  writeUint(struct, 160, auth.validBefore);
  writeHex(struct, 192, auth.nonce, 32);
  message.set(separatorOf(net), 2);
  message.set(keccak(struct), 34);
  return keccak(message);
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
  const sig = Buffer.from(evm.signature.slice(2), "hex");
  if (sig.length !== 64 && sig.length !== 65) return null;
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
    const hash = keccak(pub.subarray(1));
    return `0x${Buffer.from(hash.buffer, hash.byteOffset + 12, 20).toString("hex")}`;
  } catch {
    return null;
  }
}
