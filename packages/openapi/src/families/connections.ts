import { LIMITS } from "@gw/core";
import { CompleteConnection, ConnectionResource, ConnectStartResource, CreateConnection } from "@gw/vault";
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
      "Called by the person's browser, redirected by the provider with code and state (no bearer token: the state is the binding). Redeems the state once and exchanges the code, but does not store the grant: the browser that followed the link may not be the person's who started the connect. Always answers 303 to the console's connections screen: ?complete=<one-time code> (the signed-in console completes it with POST /v1/connections/complete) or ?error=<invalid_state|denied|exchange_failed>.",
    tags,
    public: true,
    responses: { "303": { description: "To the console's connections screen." } },
  },
  {
    method: "post",
    path: "/v1/connections/complete",
    operationId: "completeConnection",
    summary: "Complete a connect in the caller's session",
    description:
      "Stores the grant the callback parked under the one-time code it handed the browser (five minutes, single use), only when the caller is the person who started the connect. A code that is unknown, spent, expired, or was started by another user is spent and stores nothing (404); the tokens of a code completed by another user are revoked at the provider.",
    tags,
    body: { json: CompleteConnection, required: true },
    responses: {
      "201": ok("The connection now stored.", ConnectionResource),
      "400": error("Invalid body."),
      "404": error("No connect of the caller's waits under this code."),
      "413": bodyTooLarge(LIMITS.jsonBodyMaxBytes),
    },
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
  CompleteConnection,
} satisfies Record<string, v.GenericSchema>;
