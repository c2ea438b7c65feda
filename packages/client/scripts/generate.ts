// `pnpm generate:client`: builds the OpenAPI document in-process (no server is started) and writes
// the types openapi-typescript derives from it to packages/client/src/schema.d.ts (committed).
// packages/client/test/schema.test.ts fails when the committed file is not what this produces.
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { renderSchema } from "./render.ts";

const out = fileURLToPath(new URL("../src/schema.d.ts", import.meta.url));
writeFileSync(out, await renderSchema());
console.log(`wrote ${out}`);
