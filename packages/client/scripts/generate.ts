// `pnpm generate:client`: builds the OpenAPI document in-process (no server is started) and writes
// the types openapi-typescript derives from it to packages/client/src/schema.d.ts, and the enums a
// screen offers as choices to packages/client/src/values.ts (both committed).
// packages/client/test/schema.test.ts fails when the committed file is not what this produces.
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { renderSchema, renderValues } from "./render.ts";

const out = fileURLToPath(new URL("../src/schema.d.ts", import.meta.url));
writeFileSync(out, await renderSchema());
console.log(`wrote ${out}`);
const values = fileURLToPath(new URL("../src/values.ts", import.meta.url));
writeFileSync(values, renderValues());
console.log(`wrote ${values}`);
