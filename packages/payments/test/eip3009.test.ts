import { newPayer } from "@gw/fixtures";
import {
  type Hex,
  hashTypedData,
  keccak256,
  parseSignature,
  serializeCompactSignature,
  signatureToCompactSignature,
  toHex,
} from "viem";
import { describe, expect, it } from "vitest";
import { NETWORKS, signerOf, TRANSFER_WITH_AUTHORIZATION, transferDigest } from "../src/index.ts";

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
