import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { CredentialError, createKeyring, hintOf, isAllowedHeaderName, type Sealed } from "../src/index.ts";

const here = { tenantId: "t_a", credentialId: "cred_1" };
const SECRET = "sk-live-0123456789abcdefghijklmnop";

function flip(buf: Buffer, at: number): Buffer {
  const copy = Buffer.from(buf);
  copy[at] = (copy[at] ?? 0) ^ 0x01;
  return copy;
}

function failsWith(reason: CredentialError["reason"], fn: () => unknown) {
  let caught: unknown;
  try {
    fn();
  } catch (e) {
    caught = e;
  }
  expect(caught).toBeInstanceOf(CredentialError);
  expect((caught as CredentialError).reason).toBe(reason);
  // Nothing secret in what a caller might log.
  expect(String(caught)).not.toContain(SECRET);
}

describe("keyring: envelope encryption", () => {
  it("round-trips a secret and never stores it in the clear", () => {
    const kr = createKeyring(randomBytes(32));
    const sealed = kr.seal(here, SECRET);
    expect(kr.open(here, sealed)).toBe(SECRET);
    expect(sealed.kekId).toBe(kr.kekId);
    expect(sealed.kekId).toMatch(/^kek_[0-9a-f]{16}$/);
    expect(sealed.ciphertext.includes(Buffer.from(SECRET))).toBe(false);
    expect(sealed.wrappedKey).toHaveLength(1 + 12 + 16 + 32);
  });

  it("uses a fresh data key and nonce for every record", () => {
    const kr = createKeyring(randomBytes(32));
    const a = kr.seal(here, SECRET);
    const b = kr.seal(here, SECRET);
    expect(a.ciphertext.equals(b.ciphertext)).toBe(false);
    expect(a.wrappedKey.equals(b.wrappedKey)).toBe(false);
    expect(a.ciphertext.subarray(1, 13).equals(b.ciphertext.subarray(1, 13))).toBe(false);
  });

  it("binds tenant and credential id: a record moved to another row does not open", () => {
    const kr = createKeyring(randomBytes(32));
    const sealed = kr.seal(here, SECRET);
    failsWith("decrypt_failed", () => kr.open({ tenantId: "t_b", credentialId: "cred_1" }, sealed));
    failsWith("decrypt_failed", () => kr.open({ tenantId: "t_a", credentialId: "cred_2" }, sealed));
    // A field boundary shift cannot make two bindings equal.
    failsWith("decrypt_failed", () => kr.open({ tenantId: "t_a\u0000cred_1", credentialId: "" }, sealed));
    // Swapping only the ciphertext between two rows fails too: each data key is bound to its row.
    const other = kr.seal({ tenantId: "t_a", credentialId: "cred_2" }, SECRET);
    failsWith("decrypt_failed", () => kr.open(here, { ...sealed, ciphertext: other.ciphertext }));
  });

  it("fails closed on a tampered ciphertext, tag, nonce, wrapped key or format byte", () => {
    const kr = createKeyring(randomBytes(32));
    const s = kr.seal(here, SECRET);
    const tampered: Array<[string, Sealed]> = [
      ["ciphertext body", { ...s, ciphertext: flip(s.ciphertext, s.ciphertext.length - 1) }],
      ["ciphertext tag", { ...s, ciphertext: flip(s.ciphertext, 20) }],
      ["ciphertext nonce", { ...s, ciphertext: flip(s.ciphertext, 3) }],
      ["ciphertext format", { ...s, ciphertext: flip(s.ciphertext, 0) }],
      ["wrapped key body", { ...s, wrappedKey: flip(s.wrappedKey, 40) }],
      ["wrapped key nonce", { ...s, wrappedKey: flip(s.wrappedKey, 5) }],
      ["wrapped key tag", { ...s, wrappedKey: flip(s.wrappedKey, 15) }],
      ["truncated ciphertext", { ...s, ciphertext: s.ciphertext.subarray(0, 20) }],
      ["empty wrapped key", { ...s, wrappedKey: Buffer.alloc(0) }],
    ];
    for (const [label, sealed] of tampered) {
      expect(() => kr.open(here, sealed), label).toThrow(CredentialError);
    }
    expect(kr.open(here, s)).toBe(SECRET);
  });

  it("a record sealed under one KEK does not open under another", () => {
    const a = createKeyring(randomBytes(32));
    const b = createKeyring(randomBytes(32));
    const sealed = a.seal(here, SECRET);
    failsWith("unknown_kek", () => b.open(here, sealed));
    // Even with the kek_id column forged to match, the wrapped key does not open.
    failsWith("decrypt_failed", () => b.open(here, { ...sealed, kekId: b.kekId }));
  });

  it("re-wraps a data key for a new KEK without touching the ciphertext", () => {
    const old = createKeyring(randomBytes(32));
    const next = createKeyring(randomBytes(32));
    const sealed = old.seal(here, SECRET);
    const wrappedKey = old.rewrap(here, sealed, next);
    const moved = { ciphertext: sealed.ciphertext, wrappedKey, kekId: next.kekId };
    expect(next.open(here, moved)).toBe(SECRET);
    failsWith("unknown_kek", () => old.open(here, moved));
  });

  it("an ephemeral keyring is random per instance; a given key gives a stable fingerprint", () => {
    const e1 = createKeyring();
    const e2 = createKeyring();
    expect(e1.ephemeral).toBe(true);
    expect(e1.kekId).not.toBe(e2.kekId);
    const key = randomBytes(32);
    expect(createKeyring(key).kekId).toBe(createKeyring(key).kekId);
    expect(createKeyring(key).ephemeral).toBe(false);
    expect(() => createKeyring(randomBytes(16))).toThrow(/32 bytes/);
    // The keyring does not give its key away when serialized or inspected.
    expect(JSON.stringify(createKeyring(key))).not.toContain(key.toString("base64"));
  });
});

describe("hints and header names", () => {
  it("shows at most 4 characters, at most a fifth of the secret, none under 12", () => {
    expect(hintOf("short")).toBe("");
    expect(hintOf("elevenchars")).toBe("");
    expect(hintOf("twelve-chars")).toBe("rs");
    expect(hintOf("fifteen-chars!!")).toBe("s!!");
    expect(hintOf("a-long-secret-value-1234")).toBe("1234");
  });

  it("accepts HTTP tokens and refuses reserved names", () => {
    for (const ok of ["X-Api-Key", "api-key", "Authorization", "x-goog-api-key"]) {
      expect(isAllowedHeaderName(ok), ok).toBe(true);
    }
    for (const bad of [
      "Host",
      "content-length",
      "Connection",
      "Transfer-Encoding",
      "X-Gateway-Tenant-ID",
      "x-gateway-anything",
      "X-PAYMENT",
      "Mcp-Session-Id",
      "with space",
      "colon:",
      "",
      "é",
    ]) {
      expect(isAllowedHeaderName(bad), bad).toBe(false);
    }
  });
});
