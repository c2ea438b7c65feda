import { createHmac, timingSafeEqual } from "node:crypto";

/** Seals a JSON array into `<prefix><base64url claims>.<base64url mac>` and opens it again. */
export type Signed = {
  seal(claims: readonly unknown[]): string;
  /** The claims of a value this signer sealed; null for anything else (never throws). */
  open(id: unknown): unknown[] | null;
};

/**
 * Stateless signed ids (HMAC-SHA-256 under `key`, the prefix inside the MAC): visible ASCII, as
 * MCP's headers and JSON-RPC ids require. Values longer than `maxChars` are refused before any work.
 */
export function signed(key: Buffer, prefix: string, maxChars: number): Signed {
  const mac = (payload: string) => createHmac("sha256", key).update(prefix).update(payload).digest();
  return {
    seal: (claims) => {
      const payload = Buffer.from(JSON.stringify(claims)).toString("base64url");
      return `${prefix}${payload}.${mac(payload).toString("base64url")}`;
    },
    open: (id) => {
      if (typeof id !== "string" || id.length > maxChars || !id.startsWith(prefix)) return null;
      const [payload, sig, extra] = id.slice(prefix.length).split(".");
      if (!payload || !sig || extra !== undefined) return null;
      const given = Buffer.from(sig, "base64url");
      const expected = mac(payload);
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
      try {
        const value: unknown = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
        return Array.isArray(value) ? value : null;
      } catch {
        return null;
      }
    },
  };
}
