// @stores once: serves the API reference page.
// GET /docs in a real headless Chromium (Debian's `chromium`, driven by playwright-core): the
// reference renders the document with no request to another origin and no CSP violation.
import { existsSync, mkdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { TestApp } from "@gw/testkit";
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGateway } from "./helpers.ts";

const CHROMIUM = process.env.GW_CHROMIUM_PATH ?? "/usr/bin/chromium";
const inCi = process.env.CI === "true";
const skipReason = existsSync(CHROMIUM) ? undefined : `no Chromium at ${CHROMIUM}`;
if (skipReason && !inCi) console.warn(`docs browser test skipped: ${skipReason}`);
const ARTIFACTS = fileURLToPath(new URL("../../../.artifacts/docs/", import.meta.url));

let gw: TestApp;
let browser: Browser;

describe("GET /docs", () => {
  beforeAll(async () => {
    gw = await startGateway();
  });
  afterAll(async () => {
    await browser?.close();
    await gw?.close();
  });

  it("is served with a self-only CSP and loads nothing from another origin", async () => {
    const res = await fetch(`${gw.url}/docs`);
    expect(res.status).toBe(200);
    const csp = res.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain("unsafe");
    expect(csp).not.toMatch(/https?:/);
    const html = await res.text();
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    for (const asset of ["swagger-ui.css", "swagger-ui-bundle.js", "init.js"]) {
      expect((await fetch(`${gw.url}/docs/${asset}`)).status).toBe(200);
    }
    expect((await fetch(`${gw.url}/docs/../package.json`)).status).toBe(404);
    expect((await fetch(`${gw.url}/docs/index.html`)).status).toBe(404);
  });

  it.skipIf(skipReason !== undefined && !inCi)(
    "renders every operation in Chromium",
    async () => {
      mkdirSync(ARTIFACTS, { recursive: true });
      browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
      const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
      const errors: string[] = [];
      const foreign: string[] = [];
      page.on("console", (m) => {
        if (m.type() === "error") errors.push(m.text());
      });
      page.on("pageerror", (e) => errors.push(String(e)));
      page.on("request", (r) => {
        if (!r.url().startsWith(gw.url) && !r.url().startsWith("data:")) foreign.push(r.url());
      });
      await page.goto(`${gw.url}/docs`);
      await page.getByText("Agent gateway API").first().waitFor();
      await page.locator(".opblock").first().waitFor();
      const doc = (await (await fetch(`${gw.url}/openapi.json`)).json()) as { paths: Record<string, object> };
      const operations = Object.values(doc.paths).flatMap(Object.keys).length;
      expect(await page.locator(".opblock").count()).toBe(operations);
      await page.locator(".opblock-summary", { hasText: "/v1/proxy/{id}" }).first().click();
      await page.getByText("X-Gateway-Model").first().waitFor();
      await page.screenshot({ path: `${ARTIFACTS}docs.png`, fullPage: false });
      expect(errors).toEqual([]);
      expect(foreign).toEqual([]);
      // Chromium's start and Swagger UI's first render take their time on a busy 2-core machine.
    },
    120_000,
  );
});
