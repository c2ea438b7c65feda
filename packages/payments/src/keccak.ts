import { createKeccak, type IHasher } from "hash-wasm";
import { keccak256 } from "viem";

let hasher: IHasher | null = null;

/**
 * Resolves once the WebAssembly keccak is in use (or could not be: viem's stays). It compiles
 * asynchronously, so it is started when the module loads; tests and the parts script wait for it.
 */
export const keccakReady: Promise<void> = createKeccak(256).then(
  (h) => {
    hasher = h;
  },
  () => {},
);

/**
 * Keccak-256 of some bytes, a fresh array. hash-wasm's WebAssembly keccak, over ten times faster
 * than viem's (noble's JavaScript) on the 64–224 bytes a payment hashes, which made the three
 * hashes of a verification most of its digest cost (docs/performance.md); viem's until it is ready.
 * One instance serves every call: each hash is init, update and digest without a yield between.
 */
export function keccak(bytes: Uint8Array): Uint8Array {
  if (hasher === null) return keccak256(bytes, "bytes");
  hasher.init();
  hasher.update(bytes);
  return hasher.digest("binary");
}
