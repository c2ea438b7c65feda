import { conflict, isId, newId, notFound } from "@gw/core";
import { type CredentialRow, type Db, isUniqueViolation } from "@gw/db";
import type { Keyring } from "./keyring.ts";
import { credentialRepo } from "./repos/credentials.ts";
import type { CreateCredentialInput, PutCredentialInput } from "./schema.ts";
import { hintOf } from "./serialize.ts";
import { columnsFor, fieldsForPut, type Ssrf } from "./shape.ts";

/** `ssrf`: the deployment's rules, which an OAuth credential's token_url must pass. */
export type VaultCtx = { db: Db; tenantId: string; keyring: Keyring; ssrf: Ssrf };

const duplicateName = () => conflict("a credential with this name already exists");

export async function createCredential({
  ctx,
  input,
}: {
  ctx: VaultCtx;
  input: CreateCredentialInput;
}): Promise<CredentialRow> {
  const allowedHosts = input.allowed_hosts ?? null;
  const columns = columnsFor(input.kind, input, allowedHosts, ctx.ssrf);
  const id = newId("cred");
  const sealed = ctx.keyring.seal({ tenantId: ctx.tenantId, credentialId: id }, input.secret);
  try {
    return await credentialRepo.insert(ctx.db, ctx.tenantId, {
      id,
      name: input.name,
      kind: input.kind,
      ...columns,
      hint: hintOf(input.secret),
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
  const columns = columnsFor(kind, fieldsForPut(current, kind, input), allowedHosts, ctx.ssrf);
  const sealed = ctx.keyring.seal({ tenantId: ctx.tenantId, credentialId: id }, input.secret);
  let row: CredentialRow | undefined;
  try {
    row = await credentialRepo.rotate(ctx.db, ctx.tenantId, id, {
      kind,
      ...columns,
      hint: hintOf(input.secret),
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
