import { mintDevToken } from "@gw/auth";
import { SignJWT, UnsecuredJWT } from "jose";
import { client, type Res } from "./client.ts";
import { TEST_JWT_SECRET } from "./env.ts";

/**
 * The security cases every route gets, shared so that each route's tests run the same ones and a
 * new route listed in the OpenAPI document gets them without anyone writing them: the 401
 * variants of a dev (HS256) deployment, and the cross-tenant rule (another tenant's resource
 * answers exactly as a never-existing one: 404). docs/security.md describes the rules.
 */

/** One operation: an upper-case method and a path, `{param}` placeholders filled or not. */
export type RouteRef = { method: string; path: string };

/** One operation of the OpenAPI document, with what the 401 and cross-tenant cases need. */
export type ApiRoute = RouteRef & {
  /** Open without a token (`security: []`): /healthz, /version, the document, the JWKS. */
  public: boolean;
  /** Each path parameter and the id prefix its pattern accepts (`agt`, `cred`, `inv`). */
  params: Array<{ name: string; prefix: string | undefined }>;
};

/** Ids of a prefix that no tenant has: the reference answer of the cross-tenant case. */
export const NEVER_IDS = {
  agt: "agt_01890000-0000-7000-8000-000000000000",
  cred: "cred_01890000-0000-7000-8000-000000000000",
  inv: "inv_01890000-0000-7000-8000-000000000000",
} as const;
const NEVER: Record<string, string | undefined> = NEVER_IDS;

type Operation = {
  security?: unknown[];
  parameters?: Array<{ in: string; name: string; schema?: { pattern?: string } }>;
};

/** Every operation the deployment at `baseUrl` documents in GET /openapi.json. */
export async function openApiRoutes(baseUrl: string): Promise<ApiRoute[]> {
  const doc = (await client(baseUrl)("GET", "/openapi.json")).json as {
    paths: Record<string, Record<string, Operation>>;
  };
  return Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]) => ({
      method: method.toUpperCase(),
      path,
      public: Array.isArray(op.security) && op.security.length === 0,
      params: (op.parameters ?? [])
        .filter((p) => p.in === "path")
        .map((p) => ({ name: p.name, prefix: /^\^([a-z]+)_/.exec(p.schema?.pattern ?? "")?.[1] })),
    })),
  );
}

/** The route's path with each `{param}` replaced by the id of its prefix in `ids`. */
export function fillPath(route: ApiRoute, ids: Record<string, string | undefined>): string {
  let path = route.path;
  for (const p of route.params) {
    const prefix = p.prefix ?? "";
    path = path.replace(`{${p.name}}`, ids[prefix] ?? NEVER[prefix] ?? "unknown");
  }
  return path;
}

const now = () => Math.floor(Date.now() / 1000);
const hs256 = (claims: Record<string, unknown>, exp = now() + 600) =>
  new SignJWT(claims)
    .setProtectedHeader({ alg: "HS256" })
    .setIssuedAt()
    .setExpirationTime(exp)
    .sign(new TextEncoder().encode(TEST_JWT_SECRET));

/** One way to be refused: the headers a caller without a valid token sends. */
export type UnauthorizedCase = { name: string; headers: () => Promise<Record<string, string>> };

const bearer = (t: string) => ({ authorization: `Bearer ${t}` });

/**
 * The 401 variants against a deployment that trusts the dev secret (`TEST_JWT_SECRET`): each
 * must be answered 401 with no body, on every route that is not public.
 */
export const UNAUTHORIZED_CASES: readonly UnauthorizedCase[] = [
  { name: "no token", headers: async () => ({}) },
  { name: "malformed: not a JWT", headers: async () => bearer("not-a-jwt") },
  { name: "malformed: empty bearer", headers: async () => ({ authorization: "Bearer " }) },
  { name: "malformed: Basic scheme", headers: async () => ({ authorization: "Basic dXNlcjpwYXNz" }) },
  {
    name: "wrong key",
    headers: async () =>
      bearer(await mintDevToken("another-secret-of-at-least-32-characters!", { tenant: "t-x", sub: "u" })),
  },
  { name: "expired", headers: async () => bearer(await hs256({ tenant_id: "t-x", sub: "u" }, now() - 120)) },
  {
    name: "alg none",
    headers: async () =>
      bearer(
        new UnsecuredJWT({ tenant_id: "t-x", sub: "u" }).setIssuedAt().setExpirationTime("10m").encode(),
      ),
  },
  { name: "missing tenant", headers: async () => bearer(await hs256({ sub: "u" })) },
  { name: "missing sub", headers: async () => bearer(await hs256({ tenant_id: "t-x" })) },
];

/** A body a route's validation would look at, so a refusal cannot come from an empty body. */
const bodyFor = (method: string) => (method === "GET" || method === "DELETE" ? undefined : "{}");

/** The 401 cases of one route, as `[case name, run]` pairs a test can iterate or `it.each`. */
export function securityCases(baseUrl: string, route: RouteRef): Array<[string, () => Promise<Res>]> {
  return UNAUTHORIZED_CASES.map((c) => [
    `${route.method} ${route.path}: ${c.name}`,
    async () =>
      client(baseUrl)(route.method, route.path, bodyFor(route.method), {
        "content-type": "application/json",
        ...(await c.headers()),
      }),
  ]);
}

/**
 * The cross-tenant case of one route: `other` (a caller of another tenant) asks for the route
 * filled with a tenant's ids and with never-existing ids; both answers are returned so the test
 * asserts they are the same 404.
 */
export async function crossTenantCase(
  other: (method: string, path: string, body?: unknown) => Promise<Res>,
  route: ApiRoute,
  ids: Record<string, string | undefined>,
  body?: unknown,
): Promise<{ path: string; got: Res; never: Res }> {
  const path = fillPath(route, ids);
  const got = await other(route.method, path, body);
  const never = await other(route.method, fillPath(route, NEVER_IDS), body);
  return { path, got, never };
}
