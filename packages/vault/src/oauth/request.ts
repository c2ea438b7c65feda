import { bytesText, LIMITS } from "@gw/core";
import { callOut } from "@gw/upstream";
import type { Dispatcher } from "undici";

/** A token endpoint gets this long for the whole exchange: connect, answer and body. */
export const TOKEN_TIMEOUT_MS = 5_000;
/** Lifetime assumed when an answer carries no `expires_in` (RFC 6749 makes it optional). */
export const DEFAULT_TOKEN_LIFETIME_S = 300;
/** An access token and how many seconds it lives from when it was issued. */
export type IssuedToken = { accessToken: string; expiresIn: number };

/**
 * Why a token request failed, in the project's words: safe to log, never a byte of the answer.
 * `status` is the token endpoint's HTTP status when it answered.
 */
export type TokenFailure = {
  kind: "timeout" | "network" | "blocked" | "status" | "too_large" | "malformed";
  status?: number;
};

/**
 * The coarse detail of a failure as the log line says it (docs/credentials.md): the status, a
 * time-out, an unusable answer or a network error; never the form, the secret or the answer's bytes.
 */
export function describeTokenFailure(f: TokenFailure): string {
  switch (f.kind) {
    case "status":
      return `token endpoint answered ${f.status ?? "a status other than 200"}`;
    case "timeout":
      return "token endpoint timed out";
    case "blocked":
      return "token endpoint address refused by the SSRF guard";
    case "network":
      return "token endpoint unreachable";
    case "too_large":
      return `token endpoint answer was larger than ${bytesText(LIMITS.oauthTokenResponseMaxBytes)}`;
    case "malformed":
      return "token endpoint answer was not a token response";
  }
}

export class TokenRequestError extends Error {
  override name = "TokenRequestError";
  constructor(readonly failure: TokenFailure) {
    super(`token request failed: ${failure.kind}${failure.status ? ` ${failure.status}` : ""}`);
  }
}

export type TokenRequest = {
  dispatcher: Dispatcher;
  tokenUrl: string;
  /** The grant's form parameters (client authentication included for client_secret_post). */
  form: Record<string, string>;
  /** client_secret_basic: `Authorization: Basic …` (RFC 6749 §2.3.1). */
  basic?: { clientId: string; secret: string } | undefined;
  timeoutMs?: number;
};

/** RFC 6749 §2.3.1: each part is form-urlencoded before it is joined and base64-encoded. */
function basicAuth(clientId: string, secret: string): string {
  const enc = (s: string) => encodeURIComponent(s).replace(/%20/g, "+");
  return `Basic ${Buffer.from(`${enc(clientId)}:${enc(secret)}`).toString("base64")}`;
}

/**
 * One POST to a token endpoint (RFC 6749 §3.2) through `dispatcher`, the upstream dispatcher, with
 * `callOut`: the dial-time SSRF guard applies. No redirect is followed; a 3xx is a failure like any
 * status but 200. Throws TokenRequestError; its message never holds the secret,
 * the form, or the answer's bytes.
 */
export async function requestToken(req: TokenRequest): Promise<IssuedToken> {
  const headers: Record<string, string> = {
    "content-type": "application/x-www-form-urlencoded",
    accept: "application/json",
  };
  if (req.basic) headers.authorization = basicAuth(req.basic.clientId, req.basic.secret);
  const answer = await callOut({
    via: req.dispatcher,
    url: req.tokenUrl,
    method: "POST",
    headers,
    body: new URLSearchParams(req.form).toString(),
    timeoutMs: req.timeoutMs ?? TOKEN_TIMEOUT_MS,
    maxBytes: LIMITS.oauthTokenResponseMaxBytes,
    reads: (status) => status === 200,
  });
  switch (answer.kind) {
    case "failed":
      throw new TokenRequestError({ kind: answer.failure === "unreachable" ? "network" : answer.failure });
    case "dropped":
      throw new TokenRequestError({ kind: "status", status: answer.status });
    case "too_large":
      throw new TokenRequestError({ kind: "too_large", status: answer.status });
    case "answer":
      return parseTokenAnswer(answer.body);
  }
}

/** RFC 6749 §5.1: `access_token` and a bearer `token_type` (absent is tolerated), `expires_in`. */
export function parseTokenAnswer(body: Buffer): IssuedToken {
  let json: unknown;
  try {
    json = JSON.parse(body.toString("utf8"));
  } catch {
    throw new TokenRequestError({ kind: "malformed" });
  }
  if (typeof json !== "object" || json === null) throw new TokenRequestError({ kind: "malformed" });
  const { access_token: token, token_type: type, expires_in: expires } = json as Record<string, unknown>;
  if (
    typeof token !== "string" ||
    token.length === 0 ||
    // It becomes one header value, like a static secret, and is capped like one.
    token.length > LIMITS.credentialSecretMaxBytes ||
    !/^[\x21-\x7e]+$/.test(token)
  ) {
    throw new TokenRequestError({ kind: "malformed" });
  }
  if (type !== undefined && (typeof type !== "string" || type.toLowerCase() !== "bearer")) {
    throw new TokenRequestError({ kind: "malformed" });
  }
  // Some servers send the number as a string.
  const seconds = typeof expires === "string" && /^\d+$/.test(expires) ? Number(expires) : expires;
  const expiresIn =
    seconds === undefined
      ? DEFAULT_TOKEN_LIFETIME_S
      : typeof seconds === "number" && Number.isFinite(seconds) && seconds >= 0
        ? seconds
        : Number.NaN;
  if (Number.isNaN(expiresIn)) throw new TokenRequestError({ kind: "malformed" });
  return { accessToken: token, expiresIn };
}
