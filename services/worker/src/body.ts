import { storedRequest } from "@gw/invocations";
import type { TransactJob } from "@gw/queue";
import type { Runtime } from "@gw/runtime";

/**
 * The bytes to forward: inline in the job, or (a body over 64 KiB, a job the reconciler rebuilt)
 * the invocation's stored request in Postgres. Undefined when neither holds it any more.
 */
export async function jobBody(job: TransactJob, deps: Pick<Runtime, "store">): Promise<Buffer | undefined> {
  if (!job.bodyStored) return Buffer.from(job.body, "base64");
  return (await storedRequest(deps.store, job.tenantId, job.invocationId))?.body;
}
