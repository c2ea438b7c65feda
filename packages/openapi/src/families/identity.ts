import { MeResource } from "@gw/auth";
import { CapabilitiesResource } from "@gw/core";
import type * as v from "valibot";
import { ok } from "../common.ts";
import type { Route } from "../route.ts";

const tags = ["Identity"];

export const identityRoutes: Route[] = [
  {
    method: "get",
    path: "/v1/me",
    operationId: "getMe",
    summary: "The caller's identity",
    description: "Derived from the token alone; no lookup.",
    tags,
    responses: { "200": ok("Tenant, user and scopes of the token.", MeResource) },
  },
  {
    method: "get",
    path: "/v1/capabilities",
    operationId: "getCapabilities",
    summary: "What this deployment offers",
    description:
      "Mounted route families (false is why a family answers 404), whether MCP tools/call needs a verified envelope, the limits the handlers enforce, and the deployment posture.",
    tags,
    responses: { "200": ok("Capabilities.", CapabilitiesResource) },
  },
];

export const identityComponents = {
  Me: MeResource,
  Capabilities: CapabilitiesResource,
} satisfies Record<string, v.GenericSchema>;
