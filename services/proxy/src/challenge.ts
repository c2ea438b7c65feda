import { type BearerError, bearerChallenge } from "@gw/auth";
import type { Config } from "@gw/config";

/**
 * The `WWW-Authenticate` of a 401 on a proxy path: it names the path's protected-resource metadata
 * when GW_OAUTH_AUTHORIZATION_SERVERS is set (docs/api.md), so MCP clients find the token issuer,
 * and `error="invalid_token"` when the token presented was refused.
 */
export function proxyChallenge(config: Pick<Config, "publicUrl" | "GW_OAUTH_AUTHORIZATION_SERVERS">) {
  const authorizationServers = config.GW_OAUTH_AUTHORIZATION_SERVERS;
  return (path: string, error: BearerError | undefined) =>
    bearerChallenge({ publicUrl: config.publicUrl, path, authorizationServers, error });
}
