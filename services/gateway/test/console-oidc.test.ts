// @stores once: console sign-in in a browser; no store-specific behaviour.
// Console sign-in with the organisation's identity provider, in a real headless Chromium against the
// real all-in-one gateway and a real authorization server (oauth2-mock-server: discovery, /authorize
// with PKCE S256, /token, JWKS). The gateway verifies the tokens through that server's JWKS, as a
// deployment whose console and API share one issuer does. What the server does not decide by itself
// (the tenant claim, a short lifetime, a forged or refused answer, a replayed code, a token from
// another issuer) the test asks of it through its documented hooks, one sign-in at a time.
import { existsSync, mkdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { freePort, type TestApp } from "@gw/testkit";
import { Events, OAuth2Server } from "oauth2-mock-server";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startGateway } from "./helpers.ts";

const CHROMIUM = process.env.GW_CHROMIUM_PATH ?? "/usr/bin/chromium";
const inCi = process.env.CI === "true";
const skipReason = existsSync(CHROMIUM)
  ? undefined
  : `no Chromium at ${CHROMIUM} (apt-get install -y chromium, or set GW_CHROMIUM_PATH)`;
if (skipReason && !inCi) console.warn(`console sign-in browser tests skipped: ${skipReason}`);

const CLIENT_ID = "gateway-console";
const ARTIFACTS = fileURLToPath(new URL("../../../.artifacts/console/", import.meta.url));

/** What the identity provider does for the next sign-in. */
type Plan = {
  tenant: string;
  sub: string;
  /** Lifetime of the access token (seconds); the server's default is an hour. */
  expiresIn?: number;
  /** The answer carries another state than the one the console sent. */
  forgeState?: boolean;
  /** The answer is this OAuth error instead of a code. */
  error?: string;
  /** The answer carries this (already redeemed) code instead of a fresh one. */
  replayCode?: string;
  /** The token response carries this access token instead of the one the server signed. */
  accessToken?: string;
};

let idp: OAuth2Server;
let other: OAuth2Server;
let gw: TestApp;
let browser: Browser;
let plan: Plan;
/** Every authorization request the console sent, and every answer the server gave it. */
const authorizations: URL[] = [];
const answers: URL[] = [];

const tenant = () => `t-oidc-${crypto.randomUUID()}`;

async function startIdp(): Promise<OAuth2Server> {
  const server = new OAuth2Server();
  await server.issuer.keys.generate("RS256");
  await server.start(0, "127.0.0.1");
  // It names itself http://localhost:<port>; the page and the gateway use its address.
  server.issuer.url = `http://127.0.0.1:${new URL(server.issuer.url as string).port}`;
  return server;
}

/** A token the identity provider signs for `tenantId` (as an API client would hold one). */
function tokenFor(server: OAuth2Server, tenantId: string, sub = "setup@example.com"): Promise<string> {
  return server.issuer.buildToken({
    scopesOrTransform: (_header, payload) => {
      Object.assign(payload, { sub, tenant_id: tenantId, scope: "agents:read agents:write" });
    },
  });
}

async function api(token: string, method: string, path: string, body?: unknown) {
  const res = await fetch(`${gw.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, json: await res.json().catch(() => null) };
}

/** A page that records console errors and uncaught exceptions (CSP violations are ones). */
async function newPage(): Promise<{ page: Page; errors: string[]; tokenRequests: string[] }> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const errors: string[] = [];
  const tokenRequests: string[] = [];
  page.on("console", (m) => {
    if (m.type() === "error") errors.push(m.text());
  });
  page.on("pageerror", (e) => errors.push(String(e)));
  page.on("request", (r) => {
    if (r.url().startsWith(`${idp.issuer.url}/token`) && r.method() === "POST") tokenRequests.push(r.url());
  });
  return { page, errors, tokenRequests };
}

function idpButton(page: Page) {
  return page.getByRole("button", {
    name: `Sign in with 127.0.0.1:${new URL(idp.issuer.url as string).port}`,
  });
}

/** The console's keys in the tab's storage: sessionStorage and localStorage. */
async function stored(page: Page): Promise<{ session: Record<string, string>; local: number }> {
  return (await page.evaluate(
    "({ session: Object.fromEntries(Object.entries(sessionStorage)), local: localStorage.length })",
  )) as { session: Record<string, string>; local: number };
}

async function alertText(page: Page): Promise<string> {
  const alert = page.getByRole("alert");
  return (await alert.count()) > 0 ? ((await alert.first().textContent()) ?? "") : "";
}

describe.skipIf(skipReason !== undefined && !inCi)(
  "console sign-in with the identity provider, in Chromium",
  () => {
    beforeAll(async () => {
      idp = await startIdp();
      other = await startIdp();
      idp.service.on(Events.BeforeAuthorizeRedirect, (redirect: { url: URL }, req: { url?: string }) => {
        authorizations.push(new URL(req.url ?? "/", idp.issuer.url as string));
        const url = redirect.url;
        if (plan.forgeState) url.searchParams.set("state", "forged-by-someone-else");
        if (plan.replayCode) url.searchParams.set("code", plan.replayCode);
        if (plan.error) {
          url.searchParams.delete("code");
          url.searchParams.set("error", plan.error);
          url.searchParams.set("error_description", "The user declined the sign-in");
        }
        answers.push(new URL(url.href));
      });
      idp.service.on(
        Events.BeforeTokenSigning,
        (token: { payload: Record<string, unknown> & { iat: number } }) => {
          Object.assign(token.payload, { tenant_id: plan.tenant, sub: plan.sub, scope: "agents:read" });
          if (plan.expiresIn !== undefined) token.payload.exp = token.payload.iat + plan.expiresIn;
        },
      );
      idp.service.on(Events.BeforeResponse, (response: { body: Record<string, unknown> }) => {
        if (plan.expiresIn !== undefined) response.body.expires_in = plan.expiresIn;
        if (plan.accessToken) response.body.access_token = plan.accessToken;
      });

      // GW_PUBLIC_URL must be known before the gateway starts: the redirect URI is built from it.
      const port = await freePort();
      gw = await startGateway({
        PORT: String(port),
        GW_PUBLIC_URL: `http://127.0.0.1:${port}`,
        GW_JWKS_URL: `${idp.issuer.url}/jwks`,
        GW_JWT_ISSUER: idp.issuer.url,
        GW_DEV_JWT_SECRET: undefined,
        GW_OIDC_ISSUER: idp.issuer.url,
        GW_OIDC_CLIENT_ID: CLIENT_ID,
        GW_OIDC_SCOPES: "agents:read invocations:read",
      });
      // No sandbox: CI runs as root, where Chromium's sandbox cannot start. The page is our own.
      browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
    });
    afterAll(async () => {
      await browser?.close();
      await gw?.close();
      await idp?.stop();
      await other?.stop();
    });
    beforeEach(() => {
      plan = { tenant: tenant(), sub: "ops@example.com" };
    });

    it("signs in with code + PKCE (S256), lands back on /console/, shows the token's tenant's agents; sign-out clears the tab's storage", async () => {
      const mine = plan.tenant;
      const theirs = tenant();
      expect(
        (
          await api(await tokenFor(idp, mine), "POST", "/v1/agents", {
            name: "mine-agent",
            upstream_url: "http://127.0.0.1:9/",
          })
        ).status,
      ).toBe(201);
      expect(
        (
          await api(await tokenFor(idp, theirs), "POST", "/v1/agents", {
            name: "their-agent",
            upstream_url: "http://127.0.0.1:9/",
          })
        ).status,
      ).toBe(201);

      const { page, errors } = await newPage();
      await page.goto(`${gw.url}/console/`);
      // The paste field stays beside the identity provider's button.
      await expect.poll(() => idpButton(page).count()).toBe(1);
      expect(await page.getByLabel("Access token").count()).toBe(1);
      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: `${ARTIFACTS}oidc-01-sign-in.png`, fullPage: true });
      const before = authorizations.length;
      await idpButton(page).click();
      await expect.poll(() => page.getByTestId("identity").textContent()).toContain(mine);
      expect(await page.getByTestId("identity").textContent()).toContain("ops@example.com");

      // What the console asked the identity provider for.
      const asked = authorizations.slice(before);
      expect(asked).toHaveLength(1);
      const q = asked[0]?.searchParams;
      expect(q?.get("client_id")).toBe(CLIENT_ID);
      expect(q?.get("redirect_uri")).toBe(`${gw.url}/console/`);
      expect(q?.get("response_type")).toBe("code");
      expect(q?.get("scope")).toBe("openid agents:read invocations:read");
      expect(q?.get("code_challenge_method")).toBe("S256");
      expect(q?.get("code_challenge")).toMatch(/^[\w-]{43}$/);
      expect(q?.get("state")).toMatch(/^[\w-]{20,}$/);
      // The answer (code, state) left the address bar.
      expect(new URL(page.url()).search).toBe("");

      // The tenant's agents, and only its own.
      await page.getByRole("link", { name: "Agents" }).click();
      await expect.poll(() => page.locator("main").textContent()).toContain("mine-agent");
      expect(await page.locator("main").textContent()).not.toContain("their-agent");

      // The token is in this tab's sessionStorage, nowhere in localStorage, and the gateway takes it.
      const kept = await stored(page);
      expect(kept.local).toBe(0);
      const token = kept.session["gw.console.token"] ?? "";
      expect(token.split(".")).toHaveLength(3);
      expect(kept.session["gw.console.token.expires_at"]).toMatch(/^\d+$/);
      expect(Object.keys(kept.session)).not.toContain("gw.console.oidc.pending");
      expect((await api(token, "GET", "/v1/me")).json).toMatchObject({
        tenant_id: mine,
        user_id: "ops@example.com",
      });
      // A reload of the tab keeps the sign-in.
      await page.reload();
      await expect.poll(() => page.getByTestId("identity").textContent()).toContain(mine);

      await page.getByRole("button", { name: "Sign out" }).click();
      await expect.poll(() => idpButton(page).count()).toBe(1);
      expect(Object.keys((await stored(page)).session).filter((k) => k.startsWith("gw.console."))).toEqual(
        [],
      );
      expect(errors).toEqual([]);
      await page.close();
    });

    it("an expired token returns to the sign-in screen, and the gateway refuses it too", async () => {
      plan.expiresIn = 3;
      const { page, errors } = await newPage();
      await page.goto(`${gw.url}/console/`);
      await idpButton(page).click();
      await expect.poll(() => page.getByTestId("identity").textContent()).toContain(plan.tenant);
      const token = (await stored(page)).session["gw.console.token"] ?? "";
      await expect.poll(() => alertText(page), { timeout: 15_000 }).toContain("Your sign-in expired");
      expect(await idpButton(page).count()).toBe(1);
      expect((await stored(page)).session["gw.console.token"]).toBeUndefined();
      expect((await api(token, "GET", "/v1/me")).status).toBe(401);
      // An expired token still in the tab's storage (a tab reopened later) is dropped on load.
      await page.evaluate(
        `sessionStorage.setItem("gw.console.token", ${JSON.stringify(token)}); sessionStorage.setItem("gw.console.token.expires_at", String(Date.now() - 1000))`,
      );
      await page.reload();
      await expect.poll(() => alertText(page)).toContain("Your sign-in expired");
      expect((await stored(page)).session["gw.console.token"]).toBeUndefined();
      expect(errors).toEqual([]);
      await page.close();
    });

    it("an answer with another state is refused before any code exchange", async () => {
      plan.forgeState = true;
      const { page, tokenRequests } = await newPage();
      await page.goto(`${gw.url}/console/`);
      await idpButton(page).click();
      await expect.poll(() => alertText(page)).toContain("does not match the sign-in started in this tab");
      expect(tokenRequests).toEqual([]);
      expect((await stored(page)).session["gw.console.token"]).toBeUndefined();
      expect(new URL(page.url()).search).toBe("");
      await page.close();
    });

    it("an error answer (access_denied) is shown as the provider's refusal, and nothing is kept", async () => {
      plan.error = "access_denied";
      const { page, tokenRequests, errors } = await newPage();
      await page.goto(`${gw.url}/console/`);
      await idpButton(page).click();
      await expect
        .poll(() => alertText(page))
        .toBe("The identity provider refused the sign-in: access_denied (The user declined the sign-in).");
      expect(tokenRequests).toEqual([]);
      expect((await stored(page)).session).toEqual({});
      expect(errors).toEqual([]);
      await page.close();
    });

    it("a replayed code is refused: by the console when the tab started no sign-in, by the provider when it was redeemed", async () => {
      const { page, errors, tokenRequests } = await newPage();
      await page.goto(`${gw.url}/console/`);
      await idpButton(page).click();
      await expect.poll(() => page.getByTestId("identity").textContent()).toContain(plan.tenant);
      const first = answers.at(-1) as URL;
      const code = first.searchParams.get("code") ?? "";
      expect(code).not.toBe("");
      await page.getByRole("button", { name: "Sign out" }).click();

      // The same answer again (a reload of it, a link someone sent): this tab started no sign-in.
      const exchanges = tokenRequests.length;
      await page.goto(first.href);
      await expect.poll(() => alertText(page)).toContain("does not belong to a sign-in started in this tab");
      expect(tokenRequests.length).toBe(exchanges);

      // A fresh sign-in whose answer carries the redeemed code: the provider refuses the exchange.
      plan.replayCode = code;
      await idpButton(page).click();
      await expect
        .poll(() => alertText(page))
        .toBe("The identity provider did not issue a token: it answered HTTP 400.");
      expect(tokenRequests.length).toBe(exchanges + 1);
      expect((await stored(page)).session["gw.console.token"]).toBeUndefined();
      // The browser logs the refused exchange (HTTP 400); it was the point.
      expect(errors.every((e) => e.includes("400"))).toBe(true);
      await page.close();
    });

    it("a token from another issuer is refused by the gateway: back to sign-in with a message", async () => {
      plan.accessToken = await tokenFor(other, plan.tenant, "ops@example.com");
      // The gateway itself: another issuer's signature is not one its JWKS vouches for.
      expect((await api(plan.accessToken, "GET", "/v1/me")).status).toBe(401);
      const { page, errors } = await newPage();
      await page.goto(`${gw.url}/console/`);
      await idpButton(page).click();
      await expect.poll(() => alertText(page)).toContain("The token was rejected");
      expect(await idpButton(page).count()).toBe(1);
      expect((await stored(page)).session["gw.console.token"]).toBeUndefined();
      // The browser logs the 401s of /v1/me and /v1/capabilities; they were the point.
      expect(errors.every((e) => e.includes("401"))).toBe(true);
      await page.close();
    });

    it("the paste field still signs in with a token the gateway accepts", async () => {
      const { page, errors } = await newPage();
      await page.goto(`${gw.url}/console/`);
      await page.getByLabel("Access token").fill(await tokenFor(idp, plan.tenant, "robot@example.com"));
      await page.getByRole("button", { name: "Sign in", exact: true }).click();
      await expect.poll(() => page.getByTestId("identity").textContent()).toContain("robot@example.com");
      expect((await stored(page)).local).toBe(0);
      expect(errors).toEqual([]);
      await page.close();
    });
  },
);
