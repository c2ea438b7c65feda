import type { IncomingMessage, ServerResponse } from "node:http";
import { TEST_JWT_SECRET } from "@gw/testkit";
import { createRemoteJWKSet, jwtVerify } from "jose";
import { Events, OAuth2Server } from "oauth2-mock-server";

const TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange";
const ACCESS_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token";

export type TokenRequestSeen = {
  path: string;
  grant: string;
  clientId: string | undefined;
  how: "basic" | "post" | "none";
  form: Record<string, string>;
};

/**
 * A client the server knows; `expiresIn` overrides the lifetime of the tokens it gets, `holdMs`
 * holds each token exchange answer that long (so concurrent callers overlap for certain).
 */
export type Client = { secret: string; expiresIn?: number; holdMs?: number };

/**
 * A real authorization server (oauth2-mock-server, RS256) for the OAuth credential tests, taught
 * through its documented hooks what it does not do by itself: it authenticates clients (Basic or
 * form, 401 invalid_client otherwise) and answers RFC 8693 token exchange on `/exchange` (a custom
 * route) for subject tokens the gateway's token issuer signed. Every token it issued is kept, for
 * the leak sweep; every token request is kept, to count fetches.
 */
export async function startAuthServer() {
  const server = new OAuth2Server();
  await server.issuer.keys.generate("RS256");
  await server.start(0, "127.0.0.1");
  // It names itself http://localhost:<port>; the gateway refuses local names at write, so the
  // issuer is its address (the documented `issuer.url` setter).
  const port = new URL(server.issuer.url as string).port;
  server.issuer.url = `http://127.0.0.1:${port}`;
  const url = server.issuer.url;
  const clients = new Map<string, Client>();
  const issued: string[] = [];
  const requests: TokenRequestSeen[] = [];

  const authenticate = (
    req: IncomingMessage,
    form: Record<string, string>,
  ): TokenRequestSeen["how"] | "bad" => {
    const basic = /^Basic (.+)$/.exec(req.headers.authorization ?? "");
    let id: string | undefined;
    let secret: string | undefined;
    let how: TokenRequestSeen["how"] = "none";
    if (basic?.[1]) {
      const [u = "", p = ""] = Buffer.from(basic[1], "base64").toString().split(":");
      const dec = (s: string) => decodeURIComponent(s.replace(/\+/g, " "));
      [id, secret, how] = [dec(u), dec(p), "basic"];
    } else if (form.client_secret !== undefined) {
      [id, secret, how] = [form.client_id, form.client_secret, "post"];
    }
    const client = id === undefined ? undefined : clients.get(id);
    return client && client.secret === secret ? how : "bad";
  };
  const clientIdOf = (req: IncomingMessage, form: Record<string, string>) => {
    const basic = /^Basic (.+)$/.exec(req.headers.authorization ?? "");
    if (!basic?.[1]) return form.client_id;
    return decodeURIComponent(
      (Buffer.from(basic[1], "base64").toString().split(":")[0] ?? "").replace(/\+/g, " "),
    );
  };

  // Client credentials on the built-in token endpoint: refuse unknown clients and wrong secrets.
  server.service.on(Events.BeforeResponse, (response, req) => {
    const form = req.body as Record<string, string>;
    const how = authenticate(req, form);
    const clientId = clientIdOf(req, form);
    requests.push({
      path: "/token",
      grant: form.grant_type ?? "",
      clientId,
      how: how === "bad" ? "none" : how,
      form,
    });
    if (how === "bad") {
      response.statusCode = 401;
      response.body = { error: "invalid_client" };
      return;
    }
    const body = response.body as Record<string, unknown>;
    const lifetime = clientId ? clients.get(clientId)?.expiresIn : undefined;
    if (lifetime !== undefined) body.expires_in = lifetime;
    issued.push(body.access_token as string);
  });
  server.service.on(Events.BeforeTokenSigning, (token, req) => {
    const form = req.body as Record<string, string>;
    const clientId = clientIdOf(req, form);
    token.payload.client_id = clientId;
    if (form.audience) token.payload.aud = form.audience;
    // The token lives as long as the answer's expires_in says (the server signs 1 h otherwise).
    const lifetime = clientId ? clients.get(clientId)?.expiresIn : undefined;
    if (lifetime !== undefined) token.payload.exp = token.payload.iat + lifetime;
  });

  // RFC 8693 token exchange: the subject must be a token the gateway's issuer signed.
  const subjectKey = new TextEncoder().encode(TEST_JWT_SECRET);
  server.service.addRoute("POST", "/exchange", async (req, res: ServerResponse) => {
    const form = (req as IncomingMessage & { body: Record<string, string> }).body;
    const how = authenticate(req, form);
    const clientId = clientIdOf(req, form);
    requests.push({
      path: "/exchange",
      grant: form.grant_type ?? "",
      clientId,
      how: how === "bad" ? "none" : how,
      form,
    });
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { "content-type": "application/json", "cache-control": "no-store" });
      res.end(JSON.stringify(body));
    };
    if (how === "bad") return send(401, { error: "invalid_client" });
    if (form.grant_type !== TOKEN_EXCHANGE || form.subject_token_type !== ACCESS_TOKEN_TYPE) {
      return send(400, { error: "unsupported_grant_type" });
    }
    let sub: string;
    try {
      sub = (await jwtVerify(form.subject_token ?? "", subjectKey)).payload.sub as string;
    } catch {
      return send(400, { error: "invalid_grant" });
    }
    const holdMs = clientId ? clients.get(clientId)?.holdMs : undefined;
    if (holdMs) await new Promise((r) => setTimeout(r, holdMs));
    const expiresIn = (clientId ? clients.get(clientId)?.expiresIn : undefined) ?? 3600;
    const token = await server.issuer.buildToken({
      expiresIn,
      scopesOrTransform: (_header, payload) => {
        Object.assign(payload, {
          sub,
          act: { sub: clientId },
          ...(form.audience ? { aud: form.audience } : {}),
        });
        if (form.scope) payload.scope = form.scope;
      },
    });
    issued.push(token);
    send(200, {
      access_token: token,
      issued_token_type: ACCESS_TOKEN_TYPE,
      token_type: "Bearer",
      expires_in: expiresIn,
    });
  });

  const jwks = createRemoteJWKSet(new URL(`${url}/jwks`));
  return {
    /** The server itself, for suites that teach it more through its documented hooks. */
    server,
    url,
    tokenUrl: `${url}/token`,
    exchangeUrl: `${url}/exchange`,
    clients,
    issued,
    requests,
    /** Verifies a token this server signed, as an upstream would (its JWKS); the payload or null. */
    verify: async (token: string) => {
      try {
        return (await jwtVerify(token, jwks, { issuer: url })).payload;
      } catch {
        return null;
      }
    },
    close: () => server.stop(),
  };
}

export type AuthServer = Awaited<ReturnType<typeof startAuthServer>>;
