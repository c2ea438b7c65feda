import { isRecord } from "@gw/jsonrpc";
import * as v from "valibot";

// Schema pieces that request rules (schema.ts) and answer rules (answer/schema.ts) both use.

/** valibot's object schemas accept arrays (they have no unknown keys): refuse them first. */
export const jsonObject = <S extends v.GenericSchema>(schema: S) =>
  v.pipe(v.unknown(), v.check(isRecord, "must be a JSON object"), schema);

/** The longest a classifier webhook may be given to answer. */
export const CLASSIFIER_MAX_TIMEOUT_MS = 10_000;

/** A classifier webhook's `url` and `timeout_ms`, in a request rule and an answer rule alike. */
export const CLASSIFIER_FIELDS = {
  url: v.pipe(v.string("must be a string"), v.minLength(1, "must not be empty"), v.maxLength(2048)),
  timeout_ms: v.optional(
    v.pipe(
      v.number("must be a number"),
      v.integer("must be an integer"),
      v.minValue(1, "must be at least 1"),
      v.maxValue(CLASSIFIER_MAX_TIMEOUT_MS, `must be at most ${CLASSIFIER_MAX_TIMEOUT_MS}`),
    ),
  ),
};
