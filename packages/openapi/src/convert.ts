import {
  type ConversionConfig,
  type JsonSchema,
  toJsonSchema,
  toJsonSchemaDefs,
} from "@valibot/to-json-schema";
import type * as v from "valibot";

export type Valibot = v.GenericSchema;
export type Components = Record<string, Valibot>;

const refOf = (name: string) => `#/components/schemas/${name}`;

/**
 * One conversion rule for the whole document. Input types (a request's `occurred_at` is a string
 * before the schema turns it into a Date). Anything the converter cannot express throws, so a new
 * valibot feature in a route schema fails `pnpm test` instead of vanishing from the document,
 * except actions that only narrow what is accepted: a `check` becomes a sentence in the
 * description (its own message); `trim` changes nothing a caller sends and `finite` holds for
 * every JSON number.
 */
function configOf(components: Components): ConversionConfig {
  return {
    target: "draft-2020-12",
    typeMode: "input",
    errorMode: "throw",
    definitions: components,
    overrideRef: ({ referenceId }) => refOf(referenceId),
    overrideAction: ({ valibotAction, jsonSchema }) => {
      if (valibotAction.type === "trim" || valibotAction.type === "finite") return jsonSchema;
      if (valibotAction.type === "check") {
        const message = (valibotAction as { message?: unknown }).message;
        const note = typeof message === "string" ? `Checked by the server ("${message}").` : undefined;
        if (!note) return jsonSchema;
        const prior = typeof jsonSchema.description === "string" ? `${jsonSchema.description} ` : "";
        return { ...jsonSchema, description: `${prior}${note}` };
      }
      return undefined;
    },
  };
}

/** `components.schemas`: every named schema once; references between them become `$ref`s. */
export function componentSchemas(components: Components): Record<string, JsonSchema> {
  const { definitions: _ignored, ...config } = configOf(components);
  return toJsonSchemaDefs(components, config);
}

/**
 * A schema used in place (a request body, a parameter, an envelope around named items). A named
 * schema, or one containing named schemas, becomes a `$ref` to its component.
 */
export function inlineSchema(schema: Valibot, components: Components): JsonSchema {
  const { $schema: _s, $defs: _d, ...rest } = toJsonSchema(unwrapObjectGuard(schema), configOf(components));
  return rest;
}

/**
 * `pipe(unknown(), check(is an object), strictObject(...))` (the policy schemas refuse arrays
 * before the object schema runs) is described by the object schema it ends in. Only at the top:
 * nested guards still convert to `{}` with the check's message (docs/api.md, known limits).
 */
function unwrapObjectGuard(schema: Valibot): Valibot {
  const pipe = (schema as { pipe?: readonly { kind: string; type: string }[] }).pipe;
  if (pipe?.[0]?.type !== "unknown") return schema;
  const inner = pipe.slice(1).find((item) => item.kind === "schema");
  return inner ? (inner as unknown as Valibot) : schema;
}
