import { conflict, invalid, isId, newId, notFound } from "@gw/core";
import { type CredentialRow, type Db, isUniqueViolation } from "@gw/db";
import { validateUpstreamUrl } from "@gw/upstream";
import type { Dispatcher } from "undici";
import { discoverIssuer } from "./connections/provider.ts";
import type { Keyring } from "./keyring.ts";
import { credentialRepo } from "./repos/credentials.ts";
import type { CreateCredentialInput, PutCredentialInput } from "./schema.ts";
import { PER_USER_KIND } from "./schema.ts";
import { hintOf } from "./serialize.ts";
import { columnsFor, fieldsForPut, type KindFields, type Ssrf } from "./shape.ts";

/**
 * `ssrf`: the deployment's rules, which an OAuth credential's token_url must pass; `dispatcher`:
 * the upstream dispatcher an `issuer`'s discovery document is read through.
 */
export type VaultCtx = { db: Db; tenantId: string; keyring: Keyring; ssrf: Ssrf; dispatcher?: Dispatcher };

/**
 * A per-user credential given by `issuer`: its endpoints from the discovery document (read once,
 * at write time, so the credential shows them and a call never waits for discovery). Endpoints
 * given explicitly win over discovered ones.
 */
async function withDiscovery(ctx: VaultCtx, kind: string, f: KindFields): Promise<KindFields> {
  if (kind !== PER_USER_KIND || f.issuer == null) return f;
  const issuer = validateUpstreamUrl(f.issuer, { ...ctx.ssrf, field: "issuer" });
  if (!ctx.dispatcher) throw invalid("issuer discovery is not available here");
  const found = await discoverIssuer(issuer, { dispatcher: ctx.dispatcher, allowHttp: ctx.ssrf.allowHttp });
  return {
    ...f,
    issuer: found.issuer,
    authorization_url: f.authorization_url ?? found.authorization_url,
    token_url: f.token_url ?? found.token_url,
    revocation_url: f.revocation_url ?? found.revocation_url,
  };
}

const duplicateName = () => conflict("a credential with this name already exists");

export async function createCredential({
  ctx,
  input,
}: {
  ctx: VaultCtx;
  input: CreateCredentialInput;
}): Promise<CredentialRow> {
  const allowedHosts = input.allowed_hosts ?? null;
  const fields = await withDiscovery(ctx, input.kind, input);
  const columns = columnsFor(input.kind, fields, allowedHosts, ctx.ssrf, input.secret !== undefined);
  const id = newId("cred");
  const secret = input.secret ?? "";
  const sealed = ctx.keyring.seal({ tenantId: ctx.tenantId, credentialId: id }, secret);
  try {
    return await credentialRepo.insert(ctx.db, ctx.tenantId, {
      id,
      name: input.name,
      kind: input.kind,
      ...columns,
      hint: hintOf(secret),
      allowedHosts,
      ...sealed,
    });
  } catch (e) {
    if (isUniqueViolation(e)) throw duplicateName();
    throw e;
  }
}

export async function getCredential({ ctx, id }: { ctx: VaultCtx; id: string }): Promise<CredentialRow> {
  const row = isId("cred", id) ? await credentialRepo.get(ctx.db, ctx.tenantId, id) : undefined;
  if (!row) throw notFound("credential");
  return row;
}

export async function listCredentials({
  ctx,
  query,
}: {
  ctx: VaultCtx;
  query: { limit: number; offset: number };
}) {
  return credentialRepo.list(ctx.db, ctx.tenantId, query);
}

/**
 * PUT: a new secret under a fresh data key (`version` + 1), optionally renamed or re-typed. The new
 * version also retires every access token cached for the old one (oauth/tokens.ts keys by version).
 */
export async function rotateCredential({
  ctx,
  id,
  input,
}: {
  ctx: VaultCtx;
  id: string;
  input: PutCredentialInput;
}): Promise<CredentialRow> {
  const current = await getCredential({ ctx, id });
  const kind = input.kind ?? current.kind;
  const allowedHosts = "allowed_hosts" in input ? (input.allowed_hosts ?? null) : current.allowedHosts;
  const fields = await withDiscovery(ctx, kind, fieldsForPut(current, kind, input));
  const columns = columnsFor(kind, fields, allowedHosts, ctx.ssrf, input.secret !== undefined);
  const secret = input.secret ?? "";
  const sealed = ctx.keyring.seal({ tenantId: ctx.tenantId, credentialId: id }, secret);
  let row: CredentialRow | undefined;
  try {
    row = await credentialRepo.rotate(ctx.db, ctx.tenantId, id, {
      kind,
      ...columns,
      hint: hintOf(secret),
      allowedHosts,
      ...(input.name !== undefined ? { name: input.name } : {}),
      ...sealed,
    });
  } catch (e) {
    if (isUniqueViolation(e)) throw duplicateName();
    throw e;
  }
  if (!row) throw notFound("credential");
  return row;
}

/** 409 while a live agent of the tenant still names it in `credential_ref`. */
export async function deleteCredential({ ctx, id }: { ctx: VaultCtx; id: string }): Promise<void> {
  const outcome = isId("cred", id)
    ? await credentialRepo.deleteUnreferenced(ctx.db, ctx.tenantId, id)
    : "not_found";
  if (outcome === "not_found") throw notFound("credential");
  if (outcome === "referenced")
    throw conflict("credential is referenced by an agent or the settlement configuration");
}
