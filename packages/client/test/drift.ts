// Typecheck-time guard (no runtime): every named schema of the generated client types equals the
// valibot schema it was generated from. Change a request or response schema without running
// `pnpm generate:client` and `pnpm typecheck` fails here, naming the schemas that drifted.
import type { COMPONENTS } from "@gw/openapi";
import type * as v from "valibot";
import type { components } from "../src/schema.ts";

/** Optional properties as the generator writes them: `x?: T`, not `x?: T | undefined`. */
type Norm<T> = T extends readonly (infer U)[]
  ? Norm<U>[]
  : T extends object
    ? { -readonly [K in keyof T]: Norm<Exclude<T[K], undefined>> }
    : T;
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;

type Server = { [K in keyof typeof COMPONENTS]: Norm<v.InferInput<(typeof COMPONENTS)[K]>> };
type Generated = { [K in keyof components["schemas"]]: Norm<components["schemas"][K]> };

type Drifted = {
  [K in keyof Server & keyof Generated]: Equal<Server[K], Generated[K]> extends true ? never : K;
}[keyof Server & keyof Generated];
type Missing = Exclude<keyof Server, keyof Generated> | Exclude<keyof Generated, keyof Server>;

export const noSchemaDrifted: [Drifted] extends [never] ? true : { drifted: Drifted } = true;
export const noSchemaMissing: [Missing] extends [never] ? true : { missing: Missing } = true;
