import type { Middleware } from "@gw/client";
import { Ajv2020 } from "ajv/dist/2020.js";

// biome-ignore lint/suspicious/noExplicitAny: an OpenAPI document is free-form JSON.
type Doc = Record<string, any>;

/**
 * A client middleware that checks every answer against the OpenAPI document the server itself
 * serves: the status must be documented for the operation and a JSON body must match its schema.
 * Tests that call through @gw/client with it prove the document describes real answers.
 */
export function conformance(doc: Doc): Middleware & { checked: () => number; failures: string[] } {
  // The whole document is one schema resource, so `#/components/schemas/...` refs resolve in it.
  const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: false });
  ajv.addSchema(doc, "doc");
  const pointer = (...parts: string[]) =>
    parts.map((p) => p.replaceAll("~", "~0").replaceAll("/", "~1")).join("/");
  const compiled = new Map<string, ReturnType<typeof ajv.compile>>();
  const validatorOf = (ref: string) => {
    let fn = compiled.get(ref);
    if (!fn) {
      fn = ajv.compile({ $ref: ref });
      compiled.set(ref, fn);
    }
    return fn;
  };
  let checked = 0;
  const failures: string[] = [];
  return {
    checked: () => checked,
    failures,
    async onResponse({ request, response, schemaPath }) {
      const method = request.method.toLowerCase();
      const status = String(response.status);
      const op = doc.paths?.[schemaPath]?.[method];
      const where = `${request.method} ${schemaPath} → ${status}`;
      if (!op) {
        failures.push(`${where}: operation not documented`);
        return undefined;
      }
      const res = op.responses?.[status];
      if (!res) {
        failures.push(`${where}: status not documented`);
        return undefined;
      }
      const type = response.headers.get("content-type") ?? "";
      const documentedJson = res.content?.["application/json"];
      if (!documentedJson) {
        if (res.content === undefined && (await response.clone().arrayBuffer()).byteLength > 0) {
          failures.push(`${where}: documented without a body, answered with one`);
        }
        checked++;
        return undefined;
      }
      if (!type.startsWith("application/json")) {
        failures.push(`${where}: documented as JSON, answered ${type || "without a body"}`);
        return undefined;
      }
      const validate = validatorOf(
        `doc#/${pointer("paths", schemaPath, method, "responses", status, "content", "application/json", "schema")}`,
      );
      const body = await response.clone().json();
      if (!validate(body)) failures.push(`${where}: ${ajv.errorsText(validate.errors)}`);
      checked++;
      return undefined;
    },
  };
}
