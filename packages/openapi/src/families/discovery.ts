import { ProtectedResourceMetadata } from "@gw/auth";
import type * as v from "valibot";
import { error, ok } from "../common.ts";
import type { Route } from "../route.ts";

const tags = ["Discovery"];

/** RFC 9728 metadata of the two proxy call paths; mounted when GW_OAUTH_AUTHORIZATION_SERVERS is set. */
export const discoveryRoutes: Route[] = ["", "/stream"].map(
  (suffix): Route => ({
    method: "get",
    path: `/.well-known/oauth-protected-resource/v1/proxy/{id}${suffix}`,
    operationId: suffix ? "getStreamResourceMetadata" : "getResourceMetadata",
    summary: `Protected-resource metadata of /v1/proxy/{id}${suffix}`,
    description:
      "RFC 9728: where to get a token for this path. Answered for any well-formed agent id without a lookup, so it does not reveal which agents exist. A 401 on a proxy path names this URL in WWW-Authenticate (resource_metadata).",
    tags,
    public: true,
    responses: {
      "200": ok("The metadata.", ProtectedResourceMetadata),
      "404": error("Malformed agent id, or no authorization servers are configured on this deployment."),
    },
  }),
);

export const discoveryComponents = {
  ProtectedResourceMetadata,
} satisfies Record<string, v.GenericSchema>;
