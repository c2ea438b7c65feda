import type { Fetchable } from "./serve.ts";

/**
 * The ingress's path split on one port (docs/architecture.md): `/v1/proxy/*` to the data plane,
 * everything else to the control plane. The all-in-one gateway serves through it, and so do the
 * tests that compose the two planes without the gateway's process.
 */
export function splitByPath(
  dataPlane: Fetchable["fetch"],
  controlPlane: Fetchable["fetch"],
): Fetchable["fetch"] {
  return (req, env) => {
    // The raw URL is cheaper to test than a parsed one; path starts after the authority.
    const url = (env.incoming as { url?: string }).url ?? "";
    return url.startsWith("/v1/proxy/") || url === "/v1/proxy" ? dataPlane(req, env) : controlPlane(req, env);
  };
}
