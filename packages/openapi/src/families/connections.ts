import { LIMITS } from "@gw/core";
import { ConnectionResource, ConnectStartResource, CreateConnection } from "@gw/vault";
import * as v from "valibot";
import { bodyTooLarge, error, noContent, ok } from "../common.ts";
import type { Route } from "../route.ts";

const tags = ["Connections"];

/**
 * Per-user upstream authorization (docs/connections.md): each person connects their own account
 * for a credential of kind oauth2_authorization_code; the gateway holds the grant. Mounted with
 * the credentials family.
 */
export const connectionsRoutes: Route[] = [
  {
    method: "post",
    path: "/v1/connections",
    operationId: "createConnection",
    summary: "Start connecting the caller's account",
    description:
      "For the caller themself: answers the provider's authorization URL (authorization code with PKCE S256, a single-use state bound to tenant, caller and credential, valid 10 minutes, the credential's resource indicator). Open it in a browser; the provider redirects back to /v1/connections/callback.",
    tags,
    body: { json: CreateConnection, required: true },
    responses: {
      "201": ok("Where to send the browser.", ConnectStartResource),
      "400": error("Invalid body, or the credential is not of kind oauth2_authorization_code."),
      "404": error("No credential with this id in the caller's tenant."),
      "413": bodyTooLarge(LIMITS.jsonBodyMaxBytes),
    },
  },
  {
    method: "get",
    path: "/v1/connections",
    operationId: "listConnections",
    summary: "List the caller's connections",
    tags,
    responses: {
      "200": ok(
        "The caller's own connections, never a token.",
        v.object({ data: v.array(ConnectionResource) }),
      ),
      "400": error("A query parameter the route does not take."),
    },
  },
  {
    method: "get",
    path: "/v1/connections/callback",
    operationId: "connectionCallback",
    summary: "The provider's redirect back",
    description:
      "Called by the person's browser, redirected by the provider with code and state (no bearer token: the state is the binding). Redeems the state once, exchanges the code and stores the grant; always answers 303 to the console's connections screen, ?connected=<credential name> or ?error=<invalid_state|denied|exchange_failed>.",
    tags,
    public: true,
    responses: { "303": { description: "To the console's connections screen." } },
  },
  {
    method: "delete",
    path: "/v1/connections/{credential_id}",
    operationId: "deleteConnection",
    summary: "Disconnect the caller's account",
    description:
      "Removes the caller's grant and revokes its tokens at the credential's revocation_url (RFC 7009) when it has one.",
    tags,
    responses: { "204": noContent, "404": error("The caller has no connection for this credential.") },
  },
];

export const connectionsComponents = {
  Connection: ConnectionResource,
  ConnectStart: ConnectStartResource,
  CreateConnection,
} satisfies Record<string, v.GenericSchema>;
