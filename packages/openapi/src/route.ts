import type * as v from "valibot";

export type Method = "get" | "post" | "put" | "patch" | "delete";

/** A JSON body described by a valibot schema (the one the route validates or answers with). */
export type JsonBody = { json: v.GenericSchema };
/** A body described by hand because the gateway does not parse it (proxy bodies, HTML). */
export type RawBody = { raw: Record<string, { schema: Record<string, unknown> }> };

export type Response = {
  description: string;
  body?: JsonBody | RawBody | undefined;
  headers?: Record<string, { description: string; schema: Record<string, unknown> }> | undefined;
};

export type Param = {
  name: string;
  in: "query" | "header";
  description: string;
  schema: v.GenericSchema;
  required?: boolean;
};

/**
 * One operation of the API as the document shows it. `path` is the OpenAPI template
 * (`/v1/agents/{id}`); every `{name}` must have an entry in the document's path parameters.
 */
export type Route = {
  method: Method;
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  /** No bearer token needed (health, version, JWKS, the document itself, discovery). */
  public?: true;
  params?: Param[];
  body?: (JsonBody | RawBody) & { description?: string; required?: boolean };
  responses: Record<string, Response>;
};
