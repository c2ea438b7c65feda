// @stores once: the console's Connections screen in a browser; no store-specific behaviour.
// The Connections screen (docs/connections.md) in a real headless Chromium against the real
// all-in-one gateway and a real authorization server (oauth2-mock-server): Connect sends the
// browser to the provider, which sends it back through the gateway's callback to the screen;
// the person's calls then carry their own token; Disconnect removes the grant.
import { existsSync } from "node:fs";
import { client, freePort, newTenant, startUpstream, type TestApp, token, type Upstream } from "@gw/testkit";
import { createRemoteJWKSet, jwtVerify } from "jose";
import { Events, OAuth2Server } from "oauth2-mock-server";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGateway } from "./helpers.ts";

const CHROMIUM = process.env.GW_CHROMIUM_PATH ?? "/usr/bin/chromium";
const inCi = process.env.CI === "true";
const skipReason = existsSync(CHROMIUM) ? undefined : `no Chromium at ${CHROMIUM}`;
if (skipReason && !inCi) console.warn(`console connections browser tests skipped: ${skipReason}`);

describe.skipIf(skipReason !== undefined && !inCi)("console Connections screen, in Chromium", () => {
  let gw: TestApp;
  let provider: OAuth2Server;
  let upstream: Upstream;
  let browser: Browser;
  /** Who signs in at the provider's /authorize next. */
  let signingIn = "nobody";
  const codes = new Map<string, string>();

  beforeAll(async () => {
    provider = new OAuth2Server();
    await provider.issuer.keys.generate("RS256");
    await provider.start(0, "127.0.0.1");
    provider.issuer.url = `http://127.0.0.1:${new URL(provider.issuer.url as string).port}`;
    provider.service.on(Events.BeforeAuthorizeRedirect, (redirect: { url: URL }) => {
      const code = redirect.url.searchParams.get("code");
      if (code) codes.set(code, signingIn);
    });
    provider.service.on(Events.BeforeTokenSigning, (t, req) => {
      const form = (req as unknown as { body: Record<string, string> }).body;
      const who = codes.get(form.code ?? "");
      if (who) t.payload.sub = who;
      // The server does not decode the Basic credentials it names the ID token's audience from.
      if (typeof t.payload.aud === "string") t.payload.aud = decodeURIComponent(t.payload.aud);
    });
    const jwks = createRemoteJWKSet(new URL(`${provider.issuer.url}/jwks`));
    upstream = await startUpstream(async (req, res) => {
      const bearer = /^Bearer (\S+)$/.exec(req.headers.authorization ?? "")?.[1];
      const sub = bearer
        ? await jwtVerify(bearer, jwks).then(
            (r) => r.payload.sub,
            () => null,
          )
        : null;
      res.writeHead(sub ? 200 : 401, { "content-type": "application/json" });
      res.end(JSON.stringify({ sub: sub ?? null }));
    });
    const port = await freePort();
    gw = await startGateway({ PORT: String(port), GW_PUBLIC_URL: `http://127.0.0.1:${port}` });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
  });
  afterAll(async () => {
    await browser?.close();
    await gw?.close();
    await provider?.stop();
    await upstream?.close();
  });

  it("Connect opens the provider and comes back connected; calls carry the person's token; Disconnect removes it", async () => {
    const tenant = newTenant();
    const admin = client(gw.url, await token(tenant, "admin"));
    const cred = await admin("POST", "/v1/credentials", {
      name: "tracker",
      kind: "oauth2_authorization_code",
      client_id: "tracker-app",
      secret: "tracker-app-secret",
      issuer: provider.issuer.url,
    });
    expect(cred.status, cred.text).toBe(201);
    const agent = await admin("POST", "/v1/agents", {
      name: "issues",
      upstream_url: upstream.url,
      credential_ref: cred.json.id,
    });
    expect(agent.status, agent.text).toBe(201);
    const bearer = await token(tenant, "alice");
    const alice = client(gw.url, bearer);
    // Not connected yet: the answer points at the screen for this credential.
    const refused = await alice("POST", `/v1/proxy/${agent.json.id}/stream`, {});
    expect(refused.status).toBe(403);
    const connectUrl = refused.json.connect_url as string;
    expect(connectUrl).toBe(`${gw.url}/console/#/connections/${cred.json.id}`);

    const { page, errors } = await newPage();
    await signIn(page, tenant, bearer);
    await page.goto(connectUrl);
    const row = page.locator(`tr[data-credential="${cred.json.id}"]`);
    await expect.poll(() => row.textContent()).toContain("not connected");
    signingIn = "alice";
    await row.getByRole("button", { name: "Connect", exact: true }).click();
    // The provider sent the browser back through the callback to this screen, which completed the
    // connect with the signed-in person's token.
    await expect.poll(() => page.getByRole("status").textContent()).toContain("Connected to tracker.");
    expect(page.url()).toBe(`${gw.url}/console/#/connections?connected=tracker`);
    await expect.poll(() => row.getByRole("button", { name: "Disconnect", exact: true }).count()).toBe(1);
    expect(await row.textContent()).toContain("connected");

    const through = await alice("POST", `/v1/proxy/${agent.json.id}/stream`, {});
    expect(through.status, through.text).toBe(200);
    expect(through.json).toEqual({ sub: "alice" });

    await row.getByRole("button", { name: "Disconnect", exact: true }).click();
    await expect.poll(() => row.getByRole("button", { name: "Connect", exact: true }).count()).toBe(1);
    expect((await alice("GET", "/v1/connections")).json.data).toEqual([]);
    expect((await alice("POST", `/v1/proxy/${agent.json.id}/stream`, {})).status).toBe(403);
    expect(errors).toEqual([]);
  });

  it("shows why a connect failed (a spent link) and stores nothing", async () => {
    const tenant = newTenant();
    const bearer = await token(tenant, "bob");
    const { page, errors } = await newPage();
    await signIn(page, tenant, bearer);
    await page.goto(`${gw.url}/v1/connections/callback?code=x&state=never-issued`);
    await expect
      .poll(() => page.getByRole("alert").first().textContent())
      .toContain("expired or was already used");
    expect(page.url()).toBe(`${gw.url}/console/#/connections?error=invalid_state`);
    expect((await client(gw.url, bearer)("GET", "/v1/connections")).json.data).toEqual([]);
    expect(errors).toEqual([]);
  });

  it("a connect someone else started, followed in this browser, stores nothing and says why", async () => {
    const tenant = newTenant();
    const admin = client(gw.url, await token(tenant, "admin"));
    const cred = await admin("POST", "/v1/credentials", {
      name: "tracker",
      kind: "oauth2_authorization_code",
      client_id: "tracker-app",
      secret: "tracker-app-secret",
      issuer: provider.issuer.url,
    });
    expect(cred.status, cred.text).toBe(201);
    const mallory = client(gw.url, await token(tenant, "mallory"));
    const lure = await mallory("POST", "/v1/connections", { credential_id: cred.json.id });
    expect(lure.status, lure.text).toBe(201);
    const bearer = await token(tenant, "carol");
    const { page, errors } = await newPage();
    await signIn(page, tenant, bearer);
    signingIn = "carol";
    // Carol's browser follows Mallory's link: the provider signs her in and sends her back.
    await page.goto(lure.json.authorize_url);
    await expect
      .poll(() => page.getByRole("alert").first().textContent())
      .toContain("someone else started it");
    expect(page.url()).toBe(`${gw.url}/console/#/connections?error=not_completed`);
    expect((await client(gw.url, bearer)("GET", "/v1/connections")).json.data).toEqual([]);
    expect((await mallory("GET", "/v1/connections")).json.data).toEqual([]);
    // The refused completion is the one error the page logged (its 404 in the console).
    expect(errors.every((e) => e.includes("404"))).toBe(true);
  });

  async function newPage(): Promise<{ page: Page; errors: string[] }> {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    const errors: string[] = [];
    page.on("console", (m) => {
      if (m.type() === "error") errors.push(m.text());
    });
    page.on("pageerror", (e) => errors.push(String(e)));
    return { page, errors };
  }

  async function signIn(page: Page, tenant: string, bearer: string) {
    await page.goto(`${gw.url}/console`);
    await page.getByLabel("Access token").fill(bearer);
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect.poll(() => page.getByTestId("identity").textContent()).toContain(tenant);
  }
});
