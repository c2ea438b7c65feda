// @stores once: serves the console's files and config.
import { CONSOLE_CSP, consoleOidcOf } from "@gw/console";
import { createBaseApp, listen } from "@gw/http";
import { createLogger } from "@gw/telemetry";
import { LogCapture, serveApp, type TestApp } from "@gw/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createControlPlaneApp } from "../src/app.ts";
import { registerConsole } from "../src/routes/console.ts";

// The console is built by the test global set-up (test/global-setup.ts), as `pnpm start` does.
let app: TestApp;
beforeAll(async () => {
  app = await serveApp(createControlPlaneApp);
});
afterAll(() => app?.close());

const get = (path: string, headers: Record<string, string> = {}) =>
  fetch(`${app.url}${path}`, { headers: { "accept-encoding": "identity", ...headers } });

describe("GET /console", () => {
  it("serves the page without a token, with the CSP and no-cache", async () => {
    const res = await get("/console");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(res.headers.get("cache-control")).toBe("no-cache");
    expect(res.headers.get("content-security-policy")).toBe(CONSOLE_CSP);
    expect(CONSOLE_CSP).toContain("default-src 'none'");
    expect(CONSOLE_CSP).toContain("script-src 'self'");
    expect(CONSOLE_CSP).not.toContain("unsafe");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(res.headers.get("x-frame-options")).toBe("DENY");
    const html = await res.text();
    expect(html).toContain('<div id="app">');
    // Nothing from another origin, and no inline script the CSP would block.
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect((await get("/console/")).status).toBe(200);
  });

  it("serves the hashed assets with their content types and a year of immutable caching", async () => {
    const html = await (await get("/console")).text();
    const js = /src="\/console\/(app-[\w]+\.js)"/.exec(html)?.[1];
    const css = /href="\/console\/(app-[\w]+\.css)"/.exec(html)?.[1];
    expect(js && css).toBeTruthy();
    const jsRes = await get(`/console/${js}`);
    expect(jsRes.status).toBe(200);
    expect(jsRes.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(jsRes.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    const body = Buffer.from(await jsRes.arrayBuffer());
    expect(body.length).toBeGreaterThan(1000);
    const cssRes = await get(`/console/${css}`);
    expect(cssRes.headers.get("content-type")).toBe("text/css; charset=utf-8");
    // Compressed when the client accepts it, byte-identical once inflated.
    const gz = await fetch(`${app.url}/console/${js}`, { headers: { "accept-encoding": "gzip" } });
    expect(gz.headers.get("content-encoding")).toBe("gzip");
    expect(gz.headers.get("vary")).toBe("Accept-Encoding");
    // fetch inflates transparently: what arrives must be the very bytes of the plain answer.
    expect(Buffer.from(await gz.arrayBuffer()).equals(body)).toBe(true);
    const etag = jsRes.headers.get("etag") ?? "";
    expect((await get(`/console/${js}`, { "if-none-match": etag })).status).toBe(304);
  });

  it("answers 404 with the error body for unknown or malformed asset names", async () => {
    for (const path of ["/console/nope.js", "/console/..%2fpackage.json", "/console/index.html%00.js"]) {
      const res = await get(path);
      expect(res.status, path).toBe(404);
      expect(await res.json()).toEqual({ error: "not found" });
    }
  });

  it("says so with a 503 when the console was never built, instead of failing", async () => {
    const logs = new LogCapture();
    const base = createBaseApp({ logger: createLogger({ service: "test", level: "info", stream: logs }) });
    registerConsole(base, { dir: "/nonexistent/console/" });
    const served = await listen(base, 0, "127.0.0.1");
    try {
      const res = await fetch(`${served.url}/console`);
      expect(res.status).toBe(503);
      expect(await res.json()).toEqual({ error: "console is not built on this deployment" });
      expect(logs.text()).toContain("console requested but not built");
    } finally {
      await served.close();
    }
  });
});

describe("GET /console/config.json", () => {
  it("says the deployment has no identity provider: {oidc: null}, without a token, with the console's headers", async () => {
    const res = await get("/console/config.json");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(res.headers.get("cache-control")).toBe("no-cache");
    expect(res.headers.get("content-security-policy")).toBe(CONSOLE_CSP);
    expect(await res.json()).toEqual({ oidc: null });
  });

  it("with an identity provider: its public sign-in settings, and the CSP lets the page reach the issuer's origin only", async () => {
    const oidc = consoleOidcOf({
      publicUrl: "https://gw.example",
      GW_OIDC_ISSUER: "https://idp.example/realms/ops",
      GW_OIDC_CLIENT_ID: "gateway-console",
      GW_OIDC_SCOPES: ["profile", "openid", "agents:read"],
    });
    const base = createBaseApp({
      logger: createLogger({ service: "test", level: "silent", stream: new LogCapture() }),
    });
    registerConsole(base, { oidc });
    const served = await listen(base, 0, "127.0.0.1");
    try {
      const res = await fetch(`${served.url}/console/config.json`);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({
        oidc: {
          issuer: "https://idp.example/realms/ops",
          client_id: "gateway-console",
          scopes: ["openid", "profile", "agents:read"],
          redirect_uri: "https://gw.example/console/",
        },
      });
      const csp = res.headers.get("content-security-policy") ?? "";
      expect(csp).toContain("connect-src 'self' https://idp.example;");
      expect(csp).toContain("form-action 'none'");
      // The page itself carries the same policy.
      const page = await fetch(`${served.url}/console/`);
      expect(page.headers.get("content-security-policy")).toBe(csp);
    } finally {
      await served.close();
    }
  });
});
