import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createUpstreamDispatcher, ssrfPolicy } from "@gw/upstream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseTokenAnswer, requestToken, TokenRequestError } from "./request.ts";

let server: Server;
let url: string;
const seen: Array<{ auth: string | undefined; body: string }> = [];
beforeAll(async () => {
  server = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => {
      body += c;
    });
    req.on("end", () => {
      seen.push({ auth: req.headers.authorization, body });
      res.writeHead(200, { "content-type": "application/json" });
      res.end('{"access_token":"tok","token_type":"bearer","expires_in":60}');
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/token`;
});
afterAll(() => new Promise((r) => server.close(r)));

describe("requestToken", () => {
  it("posts the form with the client in a form-urlencoded Basic header (RFC 6749 §2.3.1)", async () => {
    const dispatcher = createUpstreamDispatcher({
      policy: ssrfPolicy(["127.0.0.0/8"]),
      connectTimeoutMs: 1_000,
    });
    const got = await requestToken({
      dispatcher,
      tokenUrl: url,
      form: { grant_type: "client_credentials", scope: "a b" },
      basic: { clientId: "id:1", secret: "s p&c" },
    });
    expect(got).toEqual({ accessToken: "tok", expiresIn: 60 });
    const last = seen.at(-1);
    expect(last?.body).toBe("grant_type=client_credentials&scope=a+b");
    expect(Buffer.from(last?.auth?.slice(6) ?? "", "base64").toString()).toBe("id%3A1:s+p%26c");
    await dispatcher.close();
  });

  it("goes through the dial-time SSRF guard: a token endpoint on a blocked address is never dialled", async () => {
    const dispatcher = createUpstreamDispatcher({ policy: ssrfPolicy([]), connectTimeoutMs: 1_000 });
    const before = seen.length;
    const err = await requestToken({
      dispatcher,
      tokenUrl: url,
      form: { grant_type: "client_credentials" },
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TokenRequestError);
    expect((err as TokenRequestError).failure.kind).toBe("blocked");
    expect(seen.length).toBe(before);
    await dispatcher.close();
  });
});

describe("parseTokenAnswer", () => {
  const parse = (v: unknown) => parseTokenAnswer(Buffer.from(typeof v === "string" ? v : JSON.stringify(v)));
  it("accepts a bearer token, a missing token_type and a numeric string expires_in; defaults the lifetime", () => {
    expect(parse({ access_token: "a", token_type: "Bearer", expires_in: 10 })).toEqual({
      accessToken: "a",
      expiresIn: 10,
    });
    expect(parse({ access_token: "a", expires_in: "20" })).toEqual({ accessToken: "a", expiresIn: 20 });
    expect(parse({ access_token: "a" })).toEqual({ accessToken: "a", expiresIn: 300 });
  });
  it.each([
    ["not JSON", "{"],
    ["not an object", "[]"],
    ["no access_token", { token_type: "Bearer" }],
    ["an empty token", { access_token: "" }],
    ["a token with a space", { access_token: "a b" }],
    ["another token type", { access_token: "a", token_type: "N_A" }],
    ["a negative lifetime", { access_token: "a", expires_in: -1 }],
    ["a lifetime of the wrong type", { access_token: "a", expires_in: true }],
  ])("refuses %s, saying nothing of the answer", (_label, body) => {
    let err: unknown;
    try {
      parse(body);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(TokenRequestError);
    expect((err as Error).message).toBe("token request failed: malformed");
  });
});
