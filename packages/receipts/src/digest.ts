import { createHash, type Hash } from "node:crypto";

/**
 * SHA-256 of bytes as they pass (one direction of a call), for the receipt's `digests`. Fed chunk
 * by chunk while streaming: nothing is buffered.
 */
export type Digest = { update: (chunk: Uint8Array) => void; value: () => string };

export function createDigest(): Digest {
  const hash: Hash = createHash("sha256");
  let done: string | undefined;
  return {
    update: (chunk) => {
      if (done === undefined) hash.update(chunk);
    },
    value: () => {
      done ??= `sha256:${hash.digest("hex")}`;
      return done;
    },
  };
}

/** The digest of bytes held whole (the transactional body, a buffered answer). */
export function digestOf(bytes: Uint8Array): string {
  return `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
}
