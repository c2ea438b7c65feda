import { isRecord, type JsonObject } from "@gw/jsonrpc";
import * as v from "valibot";

/** How the gateway's own card says callers authenticate (docs/a2a.md, The agent card). */
export type CardAuth = {
  /** The gateway's JSON-RPC endpoint for the agent: GW_PUBLIC_URL + /v1/proxy/{id}/stream. */
  readonly url: string;
  /** GW_OAUTH_AUTHORIZATION_SERVERS: when set, the card names OAuth instead of a plain bearer. */
  readonly authorizationServers: readonly string[];
};

const SCHEME = "gateway";

/**
 * The upstream's agent card rewritten so that a client reading it talks to the gateway: its
 * interfaces become the gateway's one JSON-RPC interface (v1.0 `supportedInterfaces`; a v0.3
 * card's `url` and `preferredTransport`; a card with both shapes gets both; `additionalInterfaces`
 * dropped), its security says the gateway's bearer token (OAuth when configured), and the
 * upstream's signatures are dropped (they sign a card that no longer exists). Everything else is
 * kept as the upstream wrote it. Null when the value is not a card (not an object).
 */
export function rewriteAgentCard(card: unknown, auth: CardAuth): JsonObject | null {
  if (!isRecord(card)) return null;
  const out: JsonObject = { ...card };
  delete out.signatures;
  // The gateway serves only its JSON-RPC interface: no other interface the upstream named survives.
  delete out.additionalInterfaces;
  const legacy = isLegacyCard(card);
  if (Array.isArray(card.supportedInterfaces) || !legacy) {
    out.supportedInterfaces = [jsonRpcInterface(card.supportedInterfaces, auth.url)];
  }
  if (legacy) {
    out.url = auth.url;
    out.preferredTransport = "JSONRPC";
  }
  if (legacy) {
    out.securitySchemes = { [SCHEME]: legacyScheme(auth) };
    out.security = [{ [SCHEME]: [] }];
    delete out.securityRequirements;
  } else {
    out.securitySchemes = { [SCHEME]: scheme(auth) };
    out.securityRequirements = [{ schemes: { [SCHEME]: { list: [] } } }];
    delete out.security;
  }
  return out;
}

/** A v0.3 card: it names its endpoint in `url` (or its transport, or a 0.x protocol version). */
function isLegacyCard(card: JsonObject): boolean {
  return (
    typeof card.url === "string" ||
    typeof card.preferredTransport === "string" ||
    (typeof card.protocolVersion === "string" && card.protocolVersion.startsWith("0."))
  );
}

/**
 * The gateway's one interface: JSON-RPC at its own URL, in the protocol version of the
 * upstream's (first) JSON-RPC interface, and its tenant when it named one.
 */
function jsonRpcInterface(interfaces: unknown, url: string): JsonObject {
  const list = Array.isArray(interfaces) ? interfaces.filter(isRecord) : [];
  const upstream = list.find((i) => i.protocolBinding === "JSONRPC") ?? list[0];
  const version = typeof upstream?.protocolVersion === "string" ? upstream.protocolVersion : "1.0";
  const entry: JsonObject = { url, protocolBinding: "JSONRPC", protocolVersion: version };
  if (typeof upstream?.tenant === "string" && upstream.tenant !== "") entry.tenant = upstream.tenant;
  return entry;
}

function metadataUrl(auth: CardAuth): string | null {
  const issuer = auth.authorizationServers[0];
  return issuer ? `${issuer.replace(/\/+$/, "")}/.well-known/oauth-authorization-server` : null;
}

/** v1.0 (protobuf JSON): one `oneof` member per scheme kind. */
function scheme(auth: CardAuth): JsonObject {
  const metadata = metadataUrl(auth);
  if (metadata) {
    return {
      oauth2SecurityScheme: {
        description: "An access token of the gateway's authorization server",
        oauth2MetadataUrl: metadata,
        flows: {},
      },
    };
  }
  return { httpAuthSecurityScheme: { description: "The gateway's bearer token", scheme: "Bearer" } };
}

/** v0.3 (JSON Schema): a `type` discriminator. */
function legacyScheme(auth: CardAuth): JsonObject {
  const metadata = metadataUrl(auth);
  if (metadata) {
    return {
      type: "oauth2",
      description: "An access token of the gateway's authorization server",
      oauth2MetadataUrl: metadata,
      flows: {},
    };
  }
  return { type: "http", description: "The gateway's bearer token", scheme: "bearer" };
}

/**
 * What a card's signature covers: the card without `signatures`, its empty values (null, "", [],
 * {}) left out, as A2A clients canonicalize it before verifying (RFC 8785 JSON is then made of it).
 */
export function signedCardContent(card: JsonObject): unknown {
  const { signatures: _dropped, ...rest } = card;
  return withoutEmpty(rest) ?? {};
}

function withoutEmpty(v: unknown): unknown {
  if (v === "" || v === null || v === undefined) return undefined;
  if (Array.isArray(v)) {
    const list = v.map(withoutEmpty).filter((x) => x !== undefined);
    return list.length > 0 ? list : undefined;
  }
  if (isRecord(v)) {
    const out: JsonObject = {};
    for (const [k, x] of Object.entries(v)) {
      const kept = withoutEmpty(x);
      if (kept !== undefined) out[k] = kept;
    }
    return Object.keys(out).length > 0 ? out : undefined;
  }
  return v;
}

/**
 * The card as the gateway serves it, for the OpenAPI document: the upstream's own fields are
 * kept as they were (a loose object); what the gateway sets is named.
 */
export const AgentCardResource = v.objectWithRest(
  {
    name: v.optional(v.string()),
    supportedInterfaces: v.optional(
      v.array(
        v.object({
          url: v.string(),
          protocolBinding: v.literal("JSONRPC"),
          protocolVersion: v.string(),
          tenant: v.optional(v.string()),
        }),
      ),
    ),
    /** A v0.3 card: the gateway's JSON-RPC endpoint. */
    url: v.optional(v.string()),
    preferredTransport: v.optional(v.literal("JSONRPC")),
    securitySchemes: v.optional(v.record(v.string(), v.unknown())),
    /** The gateway's signature when receipts are on (key in /v1/receipts/jwks). */
    signatures: v.optional(v.array(v.object({ protected: v.string(), signature: v.string() }))),
  },
  v.unknown(),
);
