import { error } from "./common.ts";
import { componentSchemas, inlineSchema } from "./convert.ts";
import { FAMILIES, type Family } from "./families/index.ts";
import { PATH_PARAMS } from "./params.ts";
import type { JsonBody, RawBody, Response, Route } from "./route.ts";

export type DocumentOptions = {
  /** `servers[0].url`; GW_PUBLIC_URL of the deployment. Omitted: relative to where it was fetched. */
  publicUrl?: string;
  version?: string;
  /** Which optional families this deployment mounts; absent means mounted. */
  mounted?: Partial<Record<NonNullable<Family["surface"]>, boolean>>;
};

// biome-ignore lint/suspicious/noExplicitAny: an OpenAPI document is free-form JSON.
export type OpenApiDocument = Record<string, any>;

/** The families a deployment serves (every family when `mounted` is not given). */
export function familiesOf(opts: Pick<DocumentOptions, "mounted"> = {}): Family[] {
  return FAMILIES.filter((f) => f.surface === undefined || opts.mounted?.[f.surface] !== false);
}

/**
 * The OpenAPI 3.1 document of the gateway, generated: every schema in it is converted from the
 * valibot schema that validates the request or types the serializer of the answer.
 */
export function buildOpenApiDocument(opts: DocumentOptions = {}): OpenApiDocument {
  const families = familiesOf(opts);
  const components = Object.assign({}, ...families.map((f) => f.components));
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of families.flatMap((f) => f.routes)) {
    const item = paths[route.path] ?? {};
    paths[route.path] = item;
    if (item[route.method]) throw new Error(`${route.method} ${route.path} is described twice`);
    item[route.method] = operationOf(route, components);
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Agent gateway API",
      version: opts.version ?? "0.1.0",
      description:
        'Multi-tenant gateway in front of upstream agents (HTTP and MCP). Every route but the public ones needs `Authorization: Bearer <token>` (the scheme name in any case); a missing or invalid token is a 401 with no body. Errors with a body are `{"error": "..."}`; 500 has no body. See docs/api.md.',
    },
    ...(opts.publicUrl ? { servers: [{ url: opts.publicUrl }] } : {}),
    security: [{ bearer: [] }],
    tags: [...new Set(families.flatMap((f) => f.routes.flatMap((r) => r.tags)))].map((name) => ({ name })),
    paths,
    components: {
      securitySchemes: {
        bearer: {
          type: "http",
          scheme: "bearer",
          bearerFormat: "JWT",
          description: "OAuth 2.0 bearer JWT carrying the tenant claim and `sub`.",
        },
      },
      schemas: componentSchemas(components),
    },
  };
}

function operationOf(route: Route, components: Record<string, never> | object) {
  const named = components as Parameters<typeof inlineSchema>[1];
  const pathParams = [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => {
    const name = m[1] as string;
    const param = PATH_PARAMS[pathParamKey(route.path, name)];
    if (!param) throw new Error(`no description of path parameter ${name} of ${route.path}`);
    return {
      name,
      in: "path",
      required: true,
      description: param.description,
      schema: inlineSchema(param.schema, named),
    };
  });
  const params = (route.params ?? []).map((p) => ({
    name: p.name,
    in: p.in,
    required: p.required ?? false,
    description: p.description,
    schema: inlineSchema(p.schema, named),
  }));
  const responses: Record<string, unknown> = {};
  for (const [status, res] of Object.entries(withQueryRule(route)))
    responses[status] = responseOf(res, named);
  if (!route.public) responses["401"] = unauthorized(route.path);
  responses["500"] = { description: "Unexpected server error; no body." };
  return {
    operationId: route.operationId,
    summary: route.summary,
    ...(route.description ? { description: route.description } : {}),
    tags: route.tags,
    ...(route.public ? { security: [] } : {}),
    ...(pathParams.length + params.length ? { parameters: [...pathParams, ...params] } : {}),
    ...(route.body
      ? {
          requestBody: {
            required: route.body.required ?? true,
            ...(route.body.description ? { description: route.body.description } : {}),
            content: contentOf(route.body, named),
          },
        }
      : {}),
    responses: sortedByStatus(responses),
  };
}

/**
 * The control plane's query rule (docs/interface.md, Conventions): a route under /v1 outside the
 * proxy family takes the query parameters it lists and no other, each once; anything else is a 400.
 */
function withQueryRule(route: Route): Route["responses"] {
  if (!route.path.startsWith("/v1/") || route.path.startsWith("/v1/proxy/")) return route.responses;
  const takes = (route.params ?? []).some((p) => p.in === "query");
  const rule = takes
    ? "A query parameter this route does not list, or one given twice; the message names it."
    : "Any query parameter: this route takes none; the message names it.";
  const current = route.responses["400"];
  const bad = current ? { ...current, description: `${current.description} ${rule}` } : error(rule);
  return { ...route.responses, "400": bad };
}

function responseOf(res: Response, named: Parameters<typeof inlineSchema>[1]) {
  return {
    description: res.description,
    ...(res.headers ? { headers: res.headers } : {}),
    ...(res.body ? { content: contentOf(res.body, named) } : {}),
  };
}

function contentOf(body: JsonBody | RawBody, named: Parameters<typeof inlineSchema>[1]) {
  if ("json" in body) return { "application/json": { schema: inlineSchema(body.json, named) } };
  return body.raw;
}

/** 401 has no body (docs/interface.md, Authentication). On proxy paths its challenge names the RFC 9728 metadata. */
function unauthorized(path: string) {
  const proxy = path.startsWith("/v1/proxy/");
  return {
    description: "Missing or invalid bearer token, or absent tenant or user claims. No body.",
    headers: {
      "WWW-Authenticate": {
        description: proxy
          ? 'Bearer, with `error="invalid_token"` when a token was presented and refused (RFC 6750 §3); when the deployment announces authorization servers, `Bearer resource_metadata="<GW_PUBLIC_URL>/.well-known/oauth-protected-resource/v1/proxy/{id}[/stream]"` first (the poll names its agent\'s transactional path), e.g. `Bearer resource_metadata="…", error="invalid_token"`.'
          : 'Bearer; `Bearer error="invalid_token"` when a token was presented and refused (RFC 6750 §3).',
        schema: { type: "string" },
      },
    },
  };
}

function sortedByStatus(responses: Record<string, unknown>) {
  return Object.fromEntries(Object.entries(responses).sort(([a], [b]) => a.localeCompare(b)));
}

/** `id` means a different kind of id under each resource; the key is the path's first segment. */
function pathParamKey(path: string, name: string): string {
  if (name !== "id") return name;
  if (path.includes("/proxy/")) return "agent";
  if (path.startsWith("/v1/agents/")) return "agent";
  if (path.startsWith("/v1/credentials/")) return "credential";
  if (path.startsWith("/v1/invocations/")) return "invocation";
  if (path.startsWith("/v1/approvals/")) return "approval";
  return name;
}
