import { isRecord } from "@gw/jsonrpc";
import * as v from "valibot";

/** valibot's object schemas accept arrays (they have no unknown keys): refuse them first. */
export const jsonObject = <S extends v.GenericSchema>(schema: S) =>
  v.pipe(v.unknown(), v.check(isRecord, "must be a JSON object"), schema);
