import { bearerChallenge } from "@gw/auth";
import type { Config } from "@gw/config";

/**
 * The `WWW-Authenticate` of a 401 on a proxy path: it names the path's protected-resource metadata
 * when GW_OAUTH_AUTHORIZATION_SERVERS is set (docs/api.md), so MCP clients find the token issuer.
 */
export function proxyChallenge(config: Pick<Config, "publicUrl" | "GW_OAUTH_AUTHORIZATION_SERVERS">) {
  const authorizationServers = config.GW_OAUTH_AUTHORIZATION_SERVERS;
  return (path: string) => bearerChallenge({ publicUrl: config.publicUrl, path, authorizationServers });
}
