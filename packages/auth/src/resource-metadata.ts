import * as v from "valibot";
import type { BearerError } from "./verify.ts";

/** RFC 9728 §3: the well-known prefix inserted before the resource's path. */
export const RESOURCE_METADATA_PREFIX = "/.well-known/oauth-protected-resource";

/** The protected-resource metadata of a proxy path (RFC 9728 §2, docs/api.md). */
export const ProtectedResourceMetadata = v.object({
  resource: v.string(),
  authorization_servers: v.array(v.string()),
  bearer_methods_supported: v.array(v.literal("header")),
  scopes_supported: v.optional(v.array(v.string())),
});
export type ProtectedResourceMetadataJson = v.InferOutput<typeof ProtectedResourceMetadata>;

const AGENT_ID = "agt_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}";
/** A proxy path that is a protected resource: the transactional and the streaming path. */
const RESOURCE_RE = new RegExp(`^/v1/proxy/${AGENT_ID}(?:/stream)?$`);
/** Any proxy path of a well-formed agent id; group 1 is the agent's transactional path. */
const PROXY_RE = new RegExp(`^(/v1/proxy/${AGENT_ID})(/stream)?(/invocations/[^/]*)?/?$`);

/** True when `path` is a proxy path that has metadata: `/v1/proxy/{id}` or `.../stream`. */
export function isProtectedResourcePath(path: string): boolean {
  return RESOURCE_RE.test(path);
}

/**
 * The protected resource a called proxy path belongs to: itself for the two call paths, the
 * agent's transactional path for the poll; null for anything else (a malformed id included).
 */
export function protectedResourceOf(path: string): string | null {
  const m = PROXY_RE.exec(path);
  if (!m?.[1]) return null;
  if (m[3] !== undefined) return m[2] === undefined ? m[1] : null;
  return `${m[1]}${m[2] ?? ""}`;
}

/** Where a resource's metadata is served: the well-known prefix goes before the path (RFC 9728 §3.1). */
export function resourceMetadataUrl(publicUrl: string, resourcePath: string): string {
  const u = new URL(publicUrl);
  const base = u.pathname.replace(/\/+$/, "");
  return `${u.origin}${RESOURCE_METADATA_PREFIX}${base}${resourcePath}`;
}

/** The metadata document of one proxy path, from configuration only: no lookup. */
export function protectedResourceMetadata(opts: {
  publicUrl: string;
  resourcePath: string;
  authorizationServers: readonly string[];
}): ProtectedResourceMetadataJson {
  return {
    resource: `${opts.publicUrl}${opts.resourcePath}`,
    authorization_servers: [...opts.authorizationServers],
    bearer_methods_supported: ["header"],
  };
}

/**
 * A Bearer challenge with its parameters (RFC 6750 §3), in this order:
 * `Bearer resource_metadata="…", error="invalid_token"`; `Bearer` alone without any.
 */
export function formatBearerChallenge(params: {
  resourceMetadata?: string | undefined;
  error?: BearerError | undefined;
}): string {
  const parts: string[] = [];
  if (params.resourceMetadata !== undefined) parts.push(`resource_metadata="${params.resourceMetadata}"`);
  if (params.error !== undefined) parts.push(`error="${params.error}"`);
  return parts.length === 0 ? "Bearer" : `Bearer ${parts.join(", ")}`;
}

/**
 * The `WWW-Authenticate` value of a 401 on `path`: with authorization servers configured and a
 * proxy path, the challenge names the metadata URL (RFC 9728 §5.1); `error` says the token presented
 * was refused (RFC 6750 §3.1).
 */
export function bearerChallenge(opts: {
  publicUrl: string;
  path: string;
  authorizationServers: readonly string[];
  error?: BearerError | undefined;
}): string {
  const resource = opts.authorizationServers.length === 0 ? null : protectedResourceOf(opts.path);
  return formatBearerChallenge({
    resourceMetadata: resource === null ? undefined : resourceMetadataUrl(opts.publicUrl, resource),
    error: opts.error,
  });
}
