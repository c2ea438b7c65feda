import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { renderSchema, renderValues } from "../scripts/render.ts";

describe("@gw/client types", () => {
  it("are what `pnpm generate:client` produces from the current document (run it after a schema change)", async () => {
    const committed = readFileSync(new URL("../src/schema.d.ts", import.meta.url), "utf8");
    expect(committed).toBe(await renderSchema());
  });
  it("offer the document's enums as lists (run `pnpm generate:client` after a schema change)", () => {
    const committed = readFileSync(new URL("../src/values.ts", import.meta.url), "utf8");
    expect(committed).toBe(renderValues());
  });
});
