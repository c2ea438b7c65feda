// @stores once: protected-resource metadata and 401s, decided before the store.
import { newTenant, TEST_JWT_SECRET, type TestApp, token, type Upstream } from "@gw/testkit";
import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import {
  discoverOAuthProtectedResourceMetadata,
  extractWWWAuthenticateParams,
  UnauthorizedError,
} from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGateway, upstreamPool } from "./helpers.ts";

// MCP authorization discovery (RFC 9728, docs/api.md). The gateway is reached as http://gw.test,
// its GW_PUBLIC_URL, through a fetch that dials the test server: what an ingress does.
const PUBLIC = "http://gw.test";
const META = "/.well-known/oauth-protected-resource";
const AGENT = "agt_01890000-0000-7000-8000-0000000000aa";

let gw: TestApp;
let plain: TestApp;
let issuer: Upstream;
const { up, closeAll } = upstreamPool();

/** fetch as a client of GW_PUBLIC_URL would see it; every URL it was asked for is kept. */
function viaIngress(app: TestApp) {
  const asked: string[] = [];
  const f = (input: string | URL | Request, init?: RequestInit) => {
    const url = input instanceof Request ? input.url : String(input);
    asked.push(url);
    const target = url.startsWith(PUBLIC) ? app.url + url.slice(PUBLIC.length) : url;
    return input instanceof Request ? fetch(new Request(target, input), init) : fetch(target, init);
  };
  return Object.assign(f, { asked });
}

beforeAll(async () => {
  // A local authorization server: only its RFC 8414 metadata is needed for discovery.
  issuer = await up((req, res) => {
    if (req.url === "/.well-known/oauth-authorization-server") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          issuer: issuer.url,
          authorization_endpoint: `${issuer.url}/authorize`,
          token_endpoint: `${issuer.url}/token`,
          response_types_supported: ["code"],
          code_challenge_methods_supported: ["S256"],
        }),
      );
      return;
    }
    res.writeHead(404).end();
  });
  gw = await startGateway({
    GW_PUBLIC_URL: PUBLIC,
    GW_OAUTH_AUTHORIZATION_SERVERS: `${issuer.url}, https://second.example`,
  });
  plain = await startGateway({ GW_PUBLIC_URL: PUBLIC });
});
afterAll(async () => {
  await gw?.close();
  await plain?.close();
  await closeAll();
});

describe("protected-resource metadata", () => {
  it("answers for any well-formed agent id, without a token and without a lookup", async () => {
    for (const path of [`/v1/proxy/${AGENT}`, `/v1/proxy/${AGENT}/stream`]) {
      const res = await fetch(`${gw.url}${META}${path}`);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({
        resource: `${PUBLIC}${path}`,
        authorization_servers: [issuer.url, "https://second.example"],
        bearer_methods_supported: ["header"],
      });
    }
  });

  it("is 404 for a malformed id, another path, or when no servers are configured", async () => {
    for (const path of [
      "/v1/proxy/agt_nope",
      "/v1/proxy/AGT_x/stream",
      `/v1/proxy/${AGENT}/invocations/x`,
      "/v1/agents",
    ]) {
      const res = await fetch(`${gw.url}${META}${path}`);
      expect(res.status).toBe(404);
      expect(await res.json()).toEqual({ error: "not found" });
    }
    const res = await fetch(`${plain.url}${META}/v1/proxy/${AGENT}`);
    expect(res.status).toBe(404);
  });
});

describe("401 on proxy paths", () => {
  it("names the metadata of the path called; the poll names its agent's transactional path; no body", async () => {
    const cases: [string, string, string][] = [
      ["POST", `/v1/proxy/${AGENT}`, `/v1/proxy/${AGENT}`],
      ["POST", `/v1/proxy/${AGENT}/stream`, `/v1/proxy/${AGENT}/stream`],
      ["GET", `/v1/proxy/${AGENT}/stream`, `/v1/proxy/${AGENT}/stream`],
      ["DELETE", `/v1/proxy/${AGENT}/stream`, `/v1/proxy/${AGENT}/stream`],
      [
        "GET",
        `/v1/proxy/${AGENT}/invocations/inv_01890000-0000-7000-8000-000000000001`,
        `/v1/proxy/${AGENT}`,
      ],
    ];
    for (const [method, path, resource] of cases) {
      // No token: the challenge names the metadata only (RFC 6750 §3: no error code).
      const none = await fetch(`${gw.url}${path}`, { method });
      expect(none.status).toBe(401);
      expect(await none.text()).toBe("");
      expect(none.headers.get("www-authenticate")).toBe(
        `Bearer resource_metadata="${PUBLIC}${META}${resource}"`,
      );
      // A token that is refused: the metadata and invalid_token, whatever the scheme's case.
      for (const authorization of ["Bearer nope", "bearer nope", "Bearer two tokens"]) {
        const res = await fetch(`${gw.url}${path}`, { method, headers: { authorization } });
        expect(res.status).toBe(401);
        expect(await res.text()).toBe("");
        expect(res.headers.get("www-authenticate")).toBe(
          `Bearer resource_metadata="${PUBLIC}${META}${resource}", error="invalid_token"`,
        );
      }
    }
  });

  it("names invalid_token for an expired token; the SDK reads both parameters", async () => {
    const expired = await new SignJWT({ tenant_id: newTenant() })
      .setProtectedHeader({ alg: "HS256" })
      .setSubject("user-1")
      .setIssuedAt(Math.floor(Date.now() / 1000) - 600)
      .setExpirationTime(Math.floor(Date.now() / 1000) - 120)
      .sign(new TextEncoder().encode(TEST_JWT_SECRET));
    const res = await fetch(`${gw.url}/v1/proxy/${AGENT}/stream`, {
      method: "POST",
      headers: { authorization: `Bearer ${expired}` },
      body: "{}",
    });
    expect(res.status).toBe(401);
    const params = extractWWWAuthenticateParams(res);
    expect(params.error).toBe("invalid_token");
    expect(params.resourceMetadataUrl?.href).toBe(`${PUBLIC}${META}/v1/proxy/${AGENT}/stream`);
  });

  it("is a plain Bearer challenge without configured servers, and for malformed ids", async () => {
    const res = await fetch(`${plain.url}/v1/proxy/${AGENT}`, { method: "POST" });
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toBe("Bearer");
    const bad = await fetch(`${gw.url}/v1/proxy/agt_nope`, { method: "POST" });
    expect(bad.status).toBe(401);
    expect(bad.headers.get("www-authenticate")).toBe("Bearer");
    const refused = await fetch(`${plain.url}/v1/proxy/${AGENT}`, {
      method: "POST",
      headers: { authorization: "bearer nope" },
    });
    expect(refused.status).toBe(401);
    expect(refused.headers.get("www-authenticate")).toBe('Bearer error="invalid_token"');
  });

  it("does not change what a valid token gets, whatever the scheme's case", async () => {
    const t = await token(newTenant());
    for (const scheme of ["Bearer", "bearer", "BEARER"]) {
      const res = await fetch(`${gw.url}/v1/proxy/${AGENT}`, {
        method: "POST",
        headers: { authorization: `${scheme} ${t}` },
      });
      expect(res.status).toBe(404);
      expect(res.headers.get("www-authenticate")).toBeNull();
    }
  });
});

describe("an official MCP SDK client with no auth configured", () => {
  it("reads the metadata URL from the 401 and discovers the authorization server", async () => {
    const f = viaIngress(gw);
    const res = await f(`${PUBLIC}/v1/proxy/${AGENT}/stream`, { method: "POST", body: "{}" });
    const { resourceMetadataUrl } = extractWWWAuthenticateParams(res);
    expect(resourceMetadataUrl?.href).toBe(`${PUBLIC}${META}/v1/proxy/${AGENT}/stream`);
    const meta = await discoverOAuthProtectedResourceMetadata(
      `${PUBLIC}/v1/proxy/${AGENT}/stream`,
      resourceMetadataUrl ? { resourceMetadataUrl } : {},
      f,
    );
    expect(meta.authorization_servers).toEqual([issuer.url, "https://second.example"]);
  });

  it("goes from the 401 of initialize to the issuer's authorization page through the transport", async () => {
    const f = viaIngress(gw);
    const saved: { authorizationServerUrl?: string | undefined; resource?: string | undefined } = {};
    let redirectedTo: URL | undefined;
    // No tokens, a pre-registered client id: the SDK must find everything else by itself.
    const provider: OAuthClientProvider = {
      get redirectUrl() {
        return "http://127.0.0.1:1/callback";
      },
      get clientMetadata() {
        return { redirect_uris: ["http://127.0.0.1:1/callback"], client_name: "gw-test" };
      },
      clientInformation: () => ({ client_id: "gw-test-client" }),
      tokens: () => undefined,
      saveTokens: () => {},
      redirectToAuthorization: (url) => {
        redirectedTo = url;
      },
      saveCodeVerifier: () => {},
      codeVerifier: () => "v",
      saveDiscoveryState: (state) => {
        saved.authorizationServerUrl = state.authorizationServerUrl;
        saved.resource = state.resourceMetadata?.resource;
      },
    };
    const transport = new StreamableHTTPClientTransport(new URL(`${PUBLIC}/v1/proxy/${AGENT}/stream`), {
      authProvider: provider,
      fetch: f,
    });
    const client = new Client({ name: "discovery-test", version: "1.0.0" });
    await expect(client.connect(transport)).rejects.toBeInstanceOf(UnauthorizedError);
    expect(f.asked).toContain(`${PUBLIC}${META}/v1/proxy/${AGENT}/stream`);
    expect(saved.authorizationServerUrl).toBe(issuer.url);
    expect(saved.resource).toBe(`${PUBLIC}/v1/proxy/${AGENT}/stream`);
    expect(redirectedTo?.origin).toBe(new URL(issuer.url).origin);
    expect(redirectedTo?.searchParams.get("resource")).toBe(`${PUBLIC}/v1/proxy/${AGENT}/stream`);
    await client.close().catch(() => {});
  });
});
