import { bytesText, LIMITS } from "@gw/core";
import { ErrorBody } from "@gw/http";
import * as v from "valibot";
import type { Param, Response } from "./route.ts";

/** An id of one prefix: the prefix, an underscore and a UUID (docs/interface.md, Conventions: `agt_` + UUIDv7). */
export const idSchema = (prefix: string) =>
  v.pipe(v.string(), v.regex(new RegExp(`^${prefix}_[0-9a-f-]{36}$`)));

/** `{"error": "..."}` with the situations that produce it. */
export const error = (description: string): Response => ({ description, body: { json: ErrorBody } });

/** The 413 of a body over `maxBytes`; its message names the limit ("request body is larger than 256 KiB"). */
export const bodyTooLarge = (maxBytes: number): Response =>
  error(`Body over ${bytesText(maxBytes)}, counted as it arrives; the message names the limit.`);

/** A JSON answer described by the serializer's own schema. */
export const ok = (description: string, json: v.GenericSchema): Response => ({ description, body: { json } });

export const noContent: Response = { description: "Done; no body." };

export const retryAfter = {
  "Retry-After": {
    description: `Seconds until the next call may succeed (1..${LIMITS.retryAfterMaxSeconds}).`,
    schema: { type: "integer", minimum: 1, maximum: LIMITS.retryAfterMaxSeconds },
  },
};

/** The list envelope every list route answers (docs/interface.md, Conventions). */
export const listOf = (item: v.GenericSchema) =>
  v.object({
    data: v.array(item),
    limit: v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(LIMITS.invocationsMaxLimit)),
    offset: v.pipe(v.number(), v.integer(), v.minValue(0)),
    total: v.pipe(v.number(), v.integer(), v.minValue(0)),
  });

/** `limit` and `offset` as `pageOf` in @gw/http reads them. */
export const pageParams: Param[] = [
  {
    name: "limit",
    in: "query",
    description: `Page size, clamped to 1..${LIMITS.invocationsMaxLimit}; default ${LIMITS.listDefaultLimit}.`,
    schema: v.pipe(v.number(), v.integer()),
  },
  {
    name: "offset",
    in: "query",
    description: "Matching items to skip; default 0.",
    schema: v.pipe(v.number(), v.integer(), v.minValue(0)),
  },
];

export const timeQuery = (name: "since" | "until", description: string): Param => ({
  name,
  in: "query",
  description: `${description} RFC 3339 date-time.`,
  schema: v.pipe(v.string(), v.isoTimestamp()),
});

export const enumQuery = (name: string, values: readonly string[], description: string): Param => ({
  name,
  in: "query",
  description,
  schema: v.picklist(values),
});
