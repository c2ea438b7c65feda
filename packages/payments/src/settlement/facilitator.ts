import type { Db } from "@gw/db";
import { CredentialError, type Keyring, openCredential } from "@gw/vault";
import type { Dispatcher } from "undici";
import { settlementConfigRepo } from "../repos/settlement-configs.ts";
import type { VerifiedPayment } from "../verify.ts";
import { type SettleOutcome, settlePayment } from "./settle.ts";

export type FacilitatorRef = { url: string; credentialRef: string | null };

/** The tenant's facilitator, or null when the tenant settles nothing (payments are verified only). */
export async function facilitatorOf(db: Db, tenantId: string): Promise<FacilitatorRef | null> {
  const row = await settlementConfigRepo.get(db, tenantId);
  return row ? { url: row.facilitatorUrl, credentialRef: row.facilitatorCredentialRef } : null;
}

/**
 * Settles one verified payment with the tenant's facilitator: the credential is opened just in
 * time, like an upstream credential; one that cannot be opened fails the settlement (coarse reason
 * `facilitator_credential_error`), never a call without it.
 */
export async function settleWithFacilitator(opts: {
  db: Db;
  keyring: Keyring;
  dispatcher: Dispatcher;
  tenantId: string;
  facilitator: FacilitatorRef;
  payment: VerifiedPayment;
  timeoutMs?: number;
  backoffMs?: number;
}): Promise<SettleOutcome> {
  let inject: { header: string; value: string } | undefined;
  if (opts.facilitator.credentialRef) {
    try {
      inject = await openCredential({
        db: opts.db,
        keyring: opts.keyring,
        tenantId: opts.tenantId,
        credentialId: opts.facilitator.credentialRef,
      });
    } catch (e) {
      if (e instanceof CredentialError)
        return { ok: false, attempts: 0, reason: "facilitator_credential_error" };
      throw e;
    }
  }
  return settlePayment({
    facilitatorUrl: opts.facilitator.url,
    payment: opts.payment,
    dispatcher: opts.dispatcher,
    inject,
    ...(opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}),
    ...(opts.backoffMs !== undefined ? { backoffMs: opts.backoffMs } : {}),
  });
}
