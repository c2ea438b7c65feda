import { LIMITS } from "@gw/core";
import { CreateCredential, CredentialResource, PutCredential } from "@gw/vault";
import type * as v from "valibot";
import { bodyTooLarge, error, listOf, noContent, ok, pageParams } from "../common.ts";
import type { Route } from "../route.ts";

const tags = ["Credentials"];
const notFound = error("No credential with this id in the caller's tenant (or the family is not mounted).");
const badWrite = error(
  "Invalid body: a malformed or unknown field, a reserved header_name, bad allowed_hosts, a field of another kind, an OAuth kind without token_url or client_id, a token_url failing the SSRF rules or outside allowed_hosts.",
);
const tooLarge = bodyTooLarge(LIMITS.jsonBodyMaxBytes);

/** Mounted unless GW_CREDENTIALS=off. Secrets are write-only: no answer carries one. */
export const credentialsRoutes: Route[] = [
  {
    method: "post",
    path: "/v1/credentials",
    operationId: "createCredential",
    summary: "Store an upstream credential",
    description:
      "kind bearer or api_key: a static secret. kind oauth2_client_credentials (RFC 6749 §4.4) or oauth2_token_exchange (RFC 8693, exchanges the caller's token): secret is the client secret, token_url and client_id are required, scope, audience and auth_method optional; the gateway injects Authorization: Bearer <access token>, cached until 30 s before expiry. kind oauth2_authorization_code (per-user, docs/connections.md): client_id, optional secret (none: a public client), authorization_url and token_url or issuer (discovered), optional revocation_url, scopes and resource; each person connects their own account through /v1/connections, and the answer shows the redirect_uri to register at the provider.",
    tags,
    body: { json: CreateCredential, required: true },
    responses: {
      "201": {
        ...ok("The credential, without its secret.", CredentialResource),
        headers: { Location: { description: "/v1/credentials/{id}", schema: { type: "string" } } },
      },
      "400": badWrite,
      "413": tooLarge,
    },
  },
  {
    method: "get",
    path: "/v1/credentials",
    operationId: "listCredentials",
    summary: "List credentials",
    tags,
    params: pageParams,
    responses: {
      "200": ok("A page of credentials.", listOf(CredentialResource)),
      "400": error("Invalid limit or offset."),
    },
  },
  {
    method: "get",
    path: "/v1/credentials/{id}",
    operationId: "getCredential",
    summary: "Get a credential",
    tags,
    responses: { "200": ok("The credential, without its secret.", CredentialResource), "404": notFound },
  },
  {
    method: "put",
    path: "/v1/credentials/{id}",
    operationId: "rotateCredential",
    summary: "Rotate a credential",
    description:
      "Replaces the secret (version + 1), which also retires the access tokens cached for an OAuth credential; may rename or change the kind, header, OAuth settings and allowed hosts.",
    tags,
    body: { json: PutCredential, required: true },
    responses: {
      "200": ok("The credential, without its secret.", CredentialResource),
      "400": badWrite,
      "404": notFound,
      "413": tooLarge,
    },
  },
  {
    method: "delete",
    path: "/v1/credentials/{id}",
    operationId: "deleteCredential",
    summary: "Delete a credential",
    tags,
    responses: {
      "204": noContent,
      "404": notFound,
      "409": error("The credential is still referenced by an agent."),
    },
  },
];

export const credentialsComponents = {
  Credential: CredentialResource,
  CreateCredential,
  PutCredential,
} satisfies Record<string, v.GenericSchema>;
