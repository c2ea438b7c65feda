import { invalid, notFound } from "@gw/core";
import type { Db, SettlementConfigRow } from "@gw/db";
import { type SsrfPolicy, validateUpstreamUrl } from "@gw/upstream";
import { credentialRepo } from "@gw/vault";
import * as v from "valibot";
import { settlementConfigRepo } from "./repos/settlement-configs.ts";

export type SettlementCtx = {
  db: Db;
  tenantId: string;
  ssrf: { policy: SsrfPolicy; allowHttp: boolean };
};

/** `PUT /v1/settlement/config` body; unknown fields → 400. */
export const PutSettlementConfig = v.strictObject({
  facilitator_url: v.pipe(
    v.string("must be a string"),
    v.minLength(1, "must not be empty"),
    v.maxLength(2048),
  ),
  facilitator_credential_ref: v.nullish(
    v.pipe(v.string("must be a string"), v.minLength(1), v.maxLength(64)),
  ),
});
export type PutSettlementConfigInput = v.InferOutput<typeof PutSettlementConfig>;

/** The answer of GET and PUT /v1/settlement/config; the OpenAPI document is generated from it. */
export const SettlementConfigResource = v.object({
  facilitator_url: v.string(),
  facilitator_credential_ref: v.nullable(v.string()),
  updated_at: v.pipe(v.string(), v.isoTimestamp()),
});
export type SettlementConfigJson = v.InferOutput<typeof SettlementConfigResource>;

/** The configuration as the API shows it: the credential by reference, never its secret. */
export function settlementConfigJson(row: SettlementConfigRow): SettlementConfigJson {
  return {
    facilitator_url: row.facilitatorUrl,
    facilitator_credential_ref: row.facilitatorCredentialRef,
    updated_at: row.updatedAt.toISOString(),
  };
}

export async function getSettlementConfig({ ctx }: { ctx: SettlementCtx }): Promise<SettlementConfigRow> {
  const row = await settlementConfigRepo.get(ctx.db, ctx.tenantId);
  if (!row) throw notFound("settlement configuration");
  return row;
}

/**
 * Sets the tenant's facilitator. The URL passes the same write-time SSRF check as an agent's
 * upstream (the dial-time guard checks it again on every settle); the credential must be one of
 * the tenant's.
 */
export async function putSettlementConfig({
  ctx,
  input,
}: {
  ctx: SettlementCtx;
  input: PutSettlementConfigInput;
}): Promise<SettlementConfigRow> {
  const url = validateUpstreamUrl(input.facilitator_url, { ...ctx.ssrf, field: "facilitator_url" });
  const ref = input.facilitator_credential_ref ?? null;
  if (ref !== null && !(await credentialRepo.exists(ctx.db, ctx.tenantId, ref))) {
    throw invalid("facilitator_credential_ref does not name a credential of this tenant");
  }
  return settlementConfigRepo.put(ctx.db, ctx.tenantId, {
    facilitatorUrl: url,
    facilitatorCredentialRef: ref,
  });
}
