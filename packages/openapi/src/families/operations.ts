import { ErrorBody, HealthResource, VersionResource } from "@gw/http";
import type * as v from "valibot";
import { ok } from "../common.ts";
import type { Route } from "../route.ts";

const tags = ["Operations"];

/** Probes and the description of the API itself: no token needed. */
export const operationsRoutes: Route[] = [
  {
    method: "get",
    path: "/healthz",
    operationId: "getHealth",
    summary: "Liveness and readiness",
    tags,
    public: true,
    responses: {
      "200": ok("The store (and Redis, when used) answer.", HealthResource),
      "503": ok("A dependency does not answer.", HealthResource),
    },
  },
  {
    method: "get",
    path: "/version",
    operationId: "getVersion",
    summary: "Build metadata",
    tags,
    public: true,
    responses: { "200": ok("Version and commit of this build.", VersionResource) },
  },
  {
    method: "get",
    path: "/openapi.json",
    operationId: "getOpenApiDocument",
    summary: "This document",
    description: "OpenAPI 3.1, generated from the valibot schemas that validate the routes.",
    tags,
    public: true,
    responses: {
      "200": {
        description: "The OpenAPI document.",
        body: { raw: { "application/json": { schema: { type: "object" } } } },
      },
    },
  },
  {
    method: "get",
    path: "/docs",
    operationId: "getApiReference",
    summary: "API reference page",
    description: "Renders this document; every asset is served by the gateway itself.",
    tags,
    public: true,
    responses: {
      "200": { description: "HTML page.", body: { raw: { "text/html": { schema: { type: "string" } } } } },
    },
  },
];

export const operationsComponents = {
  Error: ErrorBody,
  Health: HealthResource,
  Version: VersionResource,
} satisfies Record<string, v.GenericSchema>;
