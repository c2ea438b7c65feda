import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";

/**
 * Envelope encryption of credential secrets (docs/credentials.md).
 *
 * Each record gets a fresh random 32-byte data key (DEK). The secret is sealed with AES-256-GCM
 * under the DEK; the DEK is sealed (wrapped) with AES-256-GCM under the key-encryption key (KEK).
 * Both seals carry associated data binding the format version, the tenant id and the credential id,
 * so a ciphertext or wrapped key copied to another row or tenant does not open.
 *
 * Blob layout, both columns: [format 1 byte][nonce 12][GCM tag 16][ciphertext].
 */
export const FORMAT_VERSION = 1;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const KEY_BYTES = 32;
const HEADER_BYTES = 1 + NONCE_BYTES + TAG_BYTES;

/** Why a secret could not be produced. Only `reason` is meant for machines; nothing secret inside. */
export type CredentialFailure =
  | "not_found"
  | "unknown_kek"
  | "decrypt_failed"
  | "host_not_allowed"
  /** OAuth: the token endpoint gave no usable access token (see `detail`). */
  | "token_unavailable"
  /** OAuth token exchange: the call carries no caller token to exchange. */
  | "no_subject_token"
  /** Per-user credential: the caller has no usable grant (never connected, or the provider refused a refresh). */
  | "connection_required";

/**
 * What went wrong at a token endpoint, in the project's words (never bytes of its answer):
 * `kind` and `status` for machines, `text` as the log line says it ("token endpoint answered 401").
 */
export type CredentialFailureDetail = { kind: string; status?: number; text: string };

/**
 * A credential could not be opened. Fail closed: the caller must not call the upstream without it.
 * The data plane records it as `error_class: "credential_error"`. The message is coarse on purpose.
 */
export class CredentialError extends Error {
  override name = "CredentialError";
  readonly reason: CredentialFailure;
  readonly detail: CredentialFailureDetail | undefined;
  constructor(reason: CredentialFailure, detail?: CredentialFailureDetail) {
    super(`credential unavailable: ${reason}`);
    this.reason = reason;
    this.detail = detail;
  }

  /**
   * The fields a log line about this failure carries: `reason` and, for a token endpoint, its
   * coarse `failure` text. (A field named `detail` would be censored by the logger, which redacts
   * database error details wherever they land.)
   */
  logFields(): { reason: CredentialFailure; failure?: string } {
    return { reason: this.reason, ...(this.detail ? { failure: this.detail.text } : {}) };
  }
}

/** The row a sealed secret belongs to. Both values are bound as associated data. */
export type Binding = { tenantId: string; credentialId: string };
export type Sealed = { ciphertext: Buffer; wrappedKey: Buffer; kekId: string };

/** Unambiguous associated data: JSON of a fixed-shape array cannot collide across fields. */
function aad(purpose: "secret" | "dek", b: Binding): Buffer {
  return Buffer.from(JSON.stringify(["gw.credential", FORMAT_VERSION, purpose, b.tenantId, b.credentialId]));
}

function seal(key: Buffer, plaintext: Buffer, ad: Buffer): Buffer {
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv("aes-256-gcm", key, nonce, { authTagLength: TAG_BYTES });
  cipher.setAAD(ad);
  const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return Buffer.concat([Buffer.from([FORMAT_VERSION]), nonce, cipher.getAuthTag(), body]);
}

/** Throws CredentialError("decrypt_failed") on any malformed or tampered blob. */
function open(key: Buffer, blob: Buffer, ad: Buffer): Buffer {
  if (blob.length < HEADER_BYTES || blob[0] !== FORMAT_VERSION) throw new CredentialError("decrypt_failed");
  try {
    const nonce = blob.subarray(1, 1 + NONCE_BYTES);
    const tag = blob.subarray(1 + NONCE_BYTES, HEADER_BYTES);
    const decipher = createDecipheriv("aes-256-gcm", key, nonce, { authTagLength: TAG_BYTES });
    decipher.setAAD(ad);
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(blob.subarray(HEADER_BYTES)), decipher.final()]);
  } catch {
    throw new CredentialError("decrypt_failed");
  }
}

/** Short public fingerprint of a KEK (stored as `kek_id`); domain-separated so it is no plain hash. */
export function kekIdOf(kek: Buffer): string {
  return `kek_${createHash("sha256").update("gw.kek-id\0").update(kek).digest("hex").slice(0, 16)}`;
}

/**
 * Holds one key-encryption key. The key never leaves the object: there is no getter, and the
 * fingerprint `kekId` is all that is stored or shown.
 */
export class Keyring {
  readonly #kek: Buffer;
  readonly kekId: string;
  /** True when no GW_KMS_KEY was given and a random key lives only in this process. */
  readonly ephemeral: boolean;

  constructor(kek: Buffer | undefined) {
    if (kek !== undefined && kek.length !== KEY_BYTES)
      throw new Error("the key-encryption key must be 32 bytes");
    this.ephemeral = kek === undefined;
    this.#kek = Buffer.from(kek ?? randomBytes(KEY_BYTES));
    this.kekId = kekIdOf(this.#kek);
  }

  /** Seals `secret` under a fresh data key and nonce; the data key is wrapped by this KEK. */
  seal(binding: Binding, secret: string): Sealed {
    const dek = randomBytes(KEY_BYTES);
    try {
      return {
        ciphertext: seal(dek, Buffer.from(secret, "utf8"), aad("secret", binding)),
        wrappedKey: seal(this.#kek, dek, aad("dek", binding)),
        kekId: this.kekId,
      };
    } finally {
      dek.fill(0);
    }
  }

  /** Opens a sealed secret; throws CredentialError (unknown_kek, decrypt_failed) otherwise. */
  open(binding: Binding, sealed: Sealed): string {
    const dek = this.#unwrap(binding, sealed);
    try {
      return open(dek, sealed.ciphertext, aad("secret", binding)).toString("utf8");
    } finally {
      dek.fill(0);
    }
  }

  /** The data key wrapped by `to` instead of this keyring; the ciphertext is not touched. */
  rewrap(binding: Binding, sealed: Pick<Sealed, "wrappedKey" | "kekId">, to: Keyring): Buffer {
    const dek = this.#unwrap(binding, sealed);
    try {
      return seal(to.#kek, dek, aad("dek", binding));
    } finally {
      dek.fill(0);
    }
  }

  #unwrap(binding: Binding, sealed: Pick<Sealed, "wrappedKey" | "kekId">): Buffer {
    if (sealed.kekId !== this.kekId) throw new CredentialError("unknown_kek");
    const dek = open(this.#kek, sealed.wrappedKey, aad("dek", binding));
    if (dek.length !== KEY_BYTES) throw new CredentialError("decrypt_failed");
    return dek;
  }
}

/**
 * The process's keyring. With `kek` (GW_KMS_KEY) records survive restarts; without it a random key
 * is generated here, once, and everything sealed under it is lost when the process exits. Create it
 * once per process (the runtime does) so every request uses the same key.
 */
export function createKeyring(kek?: Buffer): Keyring {
  return new Keyring(kek);
}
