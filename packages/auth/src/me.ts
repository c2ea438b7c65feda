import * as v from "valibot";
import type { Principal } from "./claims.ts";
import { READ_BODY_SCOPE } from "./verify.ts";

/** GET /v1/me (docs/interface.md, identity); the OpenAPI document is generated from this schema. */
export const MeResource = v.object({
  tenant_id: v.string(),
  user_id: v.string(),
  scopes: v.array(v.string()),
  can_read_invocation_bodies: v.boolean(),
});
export type MeJson = v.InferOutput<typeof MeResource>;

/** Caller identity, from the token alone: no lookup. */
export function meJson(p: Principal): MeJson {
  return {
    tenant_id: p.tenantId,
    user_id: p.userId,
    scopes: [...p.scopes],
    can_read_invocation_bodies: p.scopes.includes(READ_BODY_SCOPE),
  };
}
