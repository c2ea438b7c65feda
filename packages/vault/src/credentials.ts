import { conflict, invalid, isId, newId, notFound } from "@gw/core";
import { type CredentialRow, credentialRepo, type Db, isUniqueViolation } from "@gw/db";
import type { Keyring } from "./keyring.ts";
import { type CreateCredentialInput, DEFAULT_API_KEY_HEADER, type PutCredentialInput } from "./schema.ts";
import { hintOf } from "./serialize.ts";

export type VaultCtx = { db: Db; tenantId: string; keyring: Keyring };

const duplicateName = () => conflict("a credential with this name already exists");

/** The header column: only api_key credentials have one (the default when none is named). */
function headerFor(kind: "bearer" | "api_key", headerName: string | null): string | null {
  if (kind === "bearer") {
    if (headerName !== null) throw invalid("header_name is only valid for kind api_key");
    return null;
  }
  return headerName ?? DEFAULT_API_KEY_HEADER;
}

export async function createCredential({
  ctx,
  input,
}: {
  ctx: VaultCtx;
  input: CreateCredentialInput;
}): Promise<CredentialRow> {
  const headerName = headerFor(input.kind, input.header_name ?? null);
  const id = newId("cred");
  const sealed = ctx.keyring.seal({ tenantId: ctx.tenantId, credentialId: id }, input.secret);
  try {
    return await credentialRepo.insert(ctx.db, ctx.tenantId, {
      id,
      name: input.name,
      kind: input.kind,
      headerName,
      hint: hintOf(input.secret),
      allowedHosts: input.allowed_hosts ?? null,
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

/** PUT: a new secret under a fresh data key (`version` + 1), optionally renamed or re-typed. */
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
  const keepHeader = kind === current.kind ? current.headerName : null;
  const headerName = headerFor(kind, "header_name" in input ? (input.header_name ?? null) : keepHeader);
  const sealed = ctx.keyring.seal({ tenantId: ctx.tenantId, credentialId: id }, input.secret);
  let row: CredentialRow | undefined;
  try {
    row = await credentialRepo.rotate(ctx.db, ctx.tenantId, id, {
      kind,
      headerName,
      hint: hintOf(input.secret),
      ...(input.name !== undefined ? { name: input.name } : {}),
      ...("allowed_hosts" in input ? { allowedHosts: input.allowed_hosts ?? null } : {}),
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
