import * as v from "valibot";
import { type Forwarded, ForwardedSchema, MemberSpecSchema } from "./forwarded.ts";

const Text = v.string();

/** The caller's bearer token sealed with the credentials keyring to the tenant and invocation. */
const SealedSchema = v.object({ ciphertext: Text, wrappedKey: Text, kekId: Text });

/**
 * The shape of the stored request this build writes (`version`); older shapes are read below. A
 * field added with a default needs no new version (a build that does not know it drops it); a
 * field renamed or changing meaning does, with its reader kept for the rows already stored.
 */
export const STORED_CALL_VERSION = 3;

/**
 * A transactional call's stored request (`invocation_requests.job`, jsonb, beside the bytes to
 * forward): the forwarded call as the pipeline built it, versioned, and for an
 * oauth2_token_exchange credential only the caller's token, sealed (docs/adr/0027); it lives in
 * the stored request, never in Redis, and goes when the request is purged. Postgres is the source
 * of truth and the queue carries ids only (docs/adr/0020, 0023): a worker reads this back in the
 * statement that claims the call.
 */
const StoredCallSchema = v.object({
  version: v.literal(STORED_CALL_VERSION),
  ...ForwardedSchema.entries,
  subjectToken: v.optional(SealedSchema),
});

export type StoredCall = v.InferOutput<typeof StoredCallSchema>;
export type SealedToken = v.InferOutput<typeof SealedSchema>;

/** The stored request of a forwarded call (what step 8 stores with the pending row). */
export function storedCallOf(call: Forwarded, subjectToken: SealedToken | undefined): StoredCall {
  return { version: STORED_CALL_VERSION, ...call, ...(subjectToken ? { subjectToken } : {}) };
}

/**
 * The first shape, stored without `version` by earlier builds: a pending row written then may
 * still be claimed after an upgrade. It had no `method` (always POST), and `virtual`,
 * `mcpRequestId`, `emitReceipts` and `payment` could be absent.
 */
const StoredCallV1Schema = v.object({
  invocationId: Text,
  tenantId: Text,
  agentId: Text,
  upstreamUrl: v.nullable(v.pipe(Text, v.url())),
  virtual: v.optional(v.object({ name: Text, members: v.array(MemberSpecSchema) })),
  credentialRef: v.nullable(Text),
  protocol: ForwardedSchema.entries.protocol,
  mcpMethod: v.nullable(Text),
  mcpRequestId: v.optional(v.nullable(v.union([Text, v.number()]))),
  captureBodies: v.boolean(),
  emitReceipts: v.optional(v.nullable(v.boolean())),
  headers: ForwardedSchema.entries.headers,
  clientAddress: v.optional(Text),
  payment: v.optional(ForwardedSchema.entries.payment.wrapped),
  subjectToken: v.optional(SealedSchema),
});

/**
 * The call a worker claimed, from its stored request in any shape this build knows, or null when
 * it is not one (a stored request that does not parse, or of a later build's shape): the worker
 * then ends the invocation instead of guessing at it.
 */
export function readStoredCall(stored: unknown): StoredCall | null {
  const version =
    typeof stored === "object" && stored !== null ? (stored as { version?: unknown }).version : 0;
  if (version === undefined) return firstShape(stored);
  if (version === 2) return secondShape(stored);
  if (version !== STORED_CALL_VERSION) return null;
  const parsed = v.safeParse(StoredCallSchema, stored);
  return parsed.success ? parsed.output : null;
}

/**
 * The second shape (version 2): today's, but with the JSON-RPC method and id under MCP's names
 * (`mcpMethod`, `mcpRequestId`), though they carried A2A's too.
 */
const { rpcMethod: _method, rpcId: _id, ...unrenamed } = ForwardedSchema.entries;
const StoredCallV2Schema = v.object({
  version: v.literal(2),
  ...unrenamed,
  mcpMethod: ForwardedSchema.entries.rpcMethod,
  mcpRequestId: ForwardedSchema.entries.rpcId,
  subjectToken: v.optional(SealedSchema),
});

/** A version-2 stored request as this shape: checked as it was, its two fields renamed. */
function secondShape(stored: unknown): StoredCall | null {
  const parsed = v.safeParse(StoredCallV2Schema, stored);
  if (!parsed.success) return null;
  const { mcpMethod, mcpRequestId, ...rest } = parsed.output;
  return { ...rest, version: STORED_CALL_VERSION, rpcMethod: mcpMethod, rpcId: mcpRequestId };
}

/** A first-shape stored request as the second: checked as it was, then read like one of those. */
function firstShape(stored: unknown): StoredCall | null {
  const parsed = v.safeParse(StoredCallV1Schema, stored);
  if (!parsed.success) return null;
  const old = parsed.output;
  return secondShape({
    ...old,
    version: 2,
    method: "POST",
    virtual: old.virtual ?? null,
    mcpRequestId: old.mcpRequestId ?? null,
    emitReceipts: old.emitReceipts ?? null,
    payment: old.payment ?? null,
  });
}
