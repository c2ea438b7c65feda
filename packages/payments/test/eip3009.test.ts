import { newPayer } from "@gw/fixtures";
import {
  getAddress,
  type Hex,
  hashTypedData,
  keccak256,
  parseSignature,
  serializeCompactSignature,
  signatureToCompactSignature,
  toHex,
} from "viem";
import { beforeAll, describe, expect, it } from "vitest";
import {
  keccak,
  keccakReady,
  NETWORKS,
  signerOf,
  TRANSFER_WITH_AUTHORIZATION,
  transferDigest,
} from "../src/index.ts";

const net = NETWORKS["base-sepolia"];
const domain = { name: net.name, version: net.version, chainId: net.chainId, verifyingContract: net.asset };

async function signed(i: number) {
  const payer = newPayer();
  const authorization = {
    from: payer.address,
    to: "0x5555555555555555555555555555555555555555",
    value: String(1000 + i),
    validAfter: "0",
    validBefore: String(2_000_000_000 + i),
    nonce: keccak256(toHex(`nonce-${i}`)),
  };
  const message = {
    ...authorization,
    to: authorization.to as Hex,
    value: BigInt(authorization.value),
    validAfter: 0n,
    validBefore: BigInt(authorization.validBefore),
    nonce: authorization.nonce,
  };
  const signature = await payer.signTypedData({
    domain,
    types: TRANSFER_WITH_AUTHORIZATION,
    primaryType: "TransferWithAuthorization",
    message,
  });
  return { payer, authorization, message, signature };
}

describe("EIP-3009 digest and signer, encoded by hand", () => {
  // What follows checks the WebAssembly keccak (before it is ready, viem's own answers).
  beforeAll(() => keccakReady);

  it("keccak is viem's keccak256 on any length, a fresh array every time", () => {
    const seen: Uint8Array[] = [];
    for (const length of [0, 1, 20, 32, 64, 66, 135, 136, 137, 224, 272, 1000]) {
      const bytes = Uint8Array.from({ length }, (_, i) => (i * 31 + length) & 0xff);
      const got = keccak(bytes);
      expect(toHex(got)).toBe(keccak256(bytes));
      seen.push(got);
    }
    // Each result is its own copy: a later hash does not overwrite an earlier one.
    expect(toHex(seen[0] as Uint8Array)).toBe(keccak256(new Uint8Array(0)));
  });

  it("the digest is viem's hashTypedData of the same authorization, on both chains", async () => {
    for (const n of [NETWORKS.base, NETWORKS["base-sepolia"]]) {
      const { authorization, message } = await signed(1);
      const viem = hashTypedData({
        domain: { name: n.name, version: n.version, chainId: n.chainId, verifyingContract: n.asset },
        types: TRANSFER_WITH_AUTHORIZATION,
        primaryType: "TransferWithAuthorization",
        message,
      });
      expect(toHex(transferDigest(n, authorization))).toBe(viem);
    }
  });

  it("the digest is viem's hashTypedData for generated authorizations over several domains", () => {
    // Both USDC deployments and made-up ones (other chains, contracts, names, versions): the
    // separator cached per network must be that network's, never another's of the same chain.
    const domains = [
      NETWORKS.base,
      NETWORKS["base-sepolia"],
      { ...NETWORKS.base, asset: "0x1111111111111111111111111111111111111111" as Hex },
      { ...NETWORKS.base, name: "USDC", version: "1" },
      { ...NETWORKS["base-sepolia"], chainId: 1, caip2: "eip155:1" as const },
      { ...NETWORKS["base-sepolia"], chainId: 2 ** 40 + 7, name: "" },
    ];
    const MAX = (1n << 256n) - 1n;
    const values = [0n, 1n, 1000n, 10n ** 18n, 2n ** 64n, 2n ** 255n, MAX];
    let seed = 1;
    const word = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return keccak256(toHex(`word-${seed}`));
    };
    // Addresses in the case a payer's client may send them: checksummed, lower or upper.
    const address = (i: number) => {
      const hex = word().slice(26);
      return `0x${i % 3 === 0 ? hex : i % 3 === 1 ? hex.toUpperCase() : getAddress(`0x${hex}`).slice(2)}` as Hex;
    };
    for (const [d, n] of domains.entries()) {
      for (let i = 0; i < 24; i++) {
        const authorization = {
          from: address(i),
          to: address(i + 1),
          value: String(values[(i + d) % values.length]),
          validAfter: String(values[i % 3]),
          validBefore: String(i === 0 ? MAX : BigInt(2_000_000_000 + i * 7919)),
          nonce: i === 1 ? (`0x${"00".repeat(32)}` as Hex) : word(),
        };
        const viem = hashTypedData({
          domain: { name: n.name, version: n.version, chainId: n.chainId, verifyingContract: n.asset },
          types: TRANSFER_WITH_AUTHORIZATION,
          primaryType: "TransferWithAuthorization",
          message: {
            // viem wants an upper-case address checksummed: the same 20 bytes.
            from: getAddress(authorization.from),
            to: getAddress(authorization.to),
            value: BigInt(authorization.value),
            validAfter: BigInt(authorization.validAfter),
            validBefore: BigInt(authorization.validBefore),
            nonce: authorization.nonce,
          },
        });
        expect(toHex(transferDigest(n, authorization))).toBe(viem);
      }
    }
  });

  it("refuses to encode what is not a uint256 or an address rather than hash something else", () => {
    const authorization = {
      from: `0x${"11".repeat(20)}`,
      to: `0x${"22".repeat(20)}`,
      value: "1",
      validAfter: "0",
      validBefore: "1",
      nonce: `0x${"33".repeat(32)}`,
    };
    const net = NETWORKS.base;
    expect(() => transferDigest(net, { ...authorization, value: String(1n << 256n) })).toThrow(RangeError);
    expect(() => transferDigest(net, { ...authorization, value: "-1" })).toThrow(RangeError);
    expect(() => transferDigest(net, { ...authorization, from: `0x${"1".repeat(39)}` })).toThrow(RangeError);
    expect(() => transferDigest(net, { ...authorization, to: `0x${"zz".repeat(20)}` })).toThrow(RangeError);
    expect(() => transferDigest(net, { ...authorization, to: `1x${"22".repeat(20)}` })).toThrow(RangeError);
    expect(() => transferDigest(net, { ...authorization, nonce: `0x${"33".repeat(31)}` })).toThrow(
      RangeError,
    );
  });

  it("recovers the signer of 65-byte and EIP-2098 compact signatures; anything else is another signer or none", async () => {
    for (let i = 0; i < 8; i++) {
      const { payer, authorization, signature } = await signed(i);
      expect((await signerOf(net, { signature, authorization }))?.toLowerCase()).toBe(
        payer.address.toLowerCase(),
      );
      const compact = serializeCompactSignature(signatureToCompactSignature(parseSignature(signature)));
      expect((await signerOf(net, { signature: compact, authorization }))?.toLowerCase()).toBe(
        payer.address.toLowerCase(),
      );
      // Another value, or the other chain's domain: the same signature names someone else.
      const other = await signerOf(net, { signature, authorization: { ...authorization, value: "1" } });
      expect(other?.toLowerCase()).not.toBe(payer.address.toLowerCase());
      const mainnet = await signerOf(NETWORKS.base, { signature, authorization });
      expect(mainnet?.toLowerCase()).not.toBe(payer.address.toLowerCase());
    }
    const { authorization } = await signed(99);
    expect(await signerOf(net, { signature: `0x${"00".repeat(65)}`, authorization })).toBeNull();
    expect(await signerOf(net, { signature: `0x${"ff".repeat(64)}1f`, authorization })).toBeNull();
  });
});
