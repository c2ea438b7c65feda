// @stores once: the A2A protocol: the card the gateway serves.
import { generateKeyPairSync } from "node:crypto";
import type { AgentCard } from "@a2a-js/sdk";
import { verifyAgentCardSignature } from "@a2a-js/sdk";
import { type A2aUpstream, startA2aUpstream, startUpstream, type TestApp, type Upstream } from "@gw/testkit";
import type { JWK } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Caller, caller, createAgent } from "../helpers.ts";
import { a2aClient, startA2aGateway, userMessage } from "./helpers.ts";

// The agent card the gateway serves: the upstream's (the SDK server's own card handler), fetched
// through the gateway's dial, rewritten to point at the gateway, signed with the receipt key,
// cached and dropped on writes; and what it does with upstream cards that are not cards.

const KEY = JSON.stringify(generateKeyPairSync("ed25519").privateKey.export({ format: "jwk" }));
let gw: TestApp;
let call: Caller;
let up: A2aUpstream;
let agentId: string;
let odd: Upstream;
/** What the odd upstream answers at its card path, by the first path segment of the card URL. */
const oddCards: Record<string, () => { type: string; body: string | Buffer }> = {
  text: () => ({ type: "text/html", body: "<html>not a card</html>" }),
  huge: () => ({ type: "application/json", body: `{"name":"${"x".repeat(2 * 1024 * 1024)}"}` }),
  array: () => ({ type: "application/json", body: "[1,2,3]" }),
  elsewhere: () => ({
    type: "application/json",
    body: JSON.stringify({
      name: "Elsewhere",
      supportedInterfaces: [
        { url: "https://evil.example/a2a", protocolBinding: "JSONRPC", protocolVersion: "1.0" },
        { url: "https://evil.example/rest", protocolBinding: "HTTP+JSON", protocolVersion: "1.0" },
      ],
      additionalInterfaces: [{ url: "https://evil.example/grpc", transport: "GRPC" }],
    }),
  }),
};

beforeAll(async () => {
  gw = await startA2aGateway({ GW_RECEIPT_SIGNING_KEY: KEY, GW_RECEIPT_ACTOR: "urn:gw:test" });
  call = await caller(gw);
  up = await startA2aUpstream();
  agentId = await createAgent(call, { upstream_url: up.url, protocol: "a2a" });
  odd = await startUpstream((req, res) => {
    const kind = (req.url ?? "").split("/")[1] ?? "";
    const card = oddCards[kind]?.();
    if (!card) return res.writeHead(404).end();
    res.writeHead(200, { "content-type": card.type }).end(card.body);
  });
});
afterAll(async () => {
  await up?.close();
  await odd?.close();
  await gw?.close();
});

const cardFetches = () => up.requests.filter((r) => r.path === "/.well-known/agent-card.json").length;
const v1Card = (id: string) =>
  call("GET", `/v1/proxy/${id}/.well-known/agent-card.json`, undefined, { "a2a-version": "1.0" });

describe("the card of an A2A agent", () => {
  it("points at the gateway's JSON-RPC interface, says bearer, and keeps the rest", async () => {
    const res = await v1Card(agentId);
    expect(res.status).toBe(200);
    expect(res.json.supportedInterfaces).toEqual([
      { url: `${gw.url}/v1/proxy/${agentId}/stream`, protocolBinding: "JSONRPC", protocolVersion: "1.0" },
    ]);
    expect(res.json.securitySchemes).toEqual({
      gateway: { httpAuthSecurityScheme: { description: "The gateway's bearer token", scheme: "Bearer" } },
    });
    expect(res.json.securityRequirements).toEqual([{ schemes: { gateway: { list: [] } } }]);
    expect(res.json).toMatchObject({
      name: "Echo agent",
      skills: [{ id: "echo" }],
      capabilities: { streaming: true },
    });
    expect(JSON.stringify(res.json)).not.toContain("upstream-signature");
    // The same card from the control plane.
    const same = await call("GET", `/v1/agents/${agentId}/card`, undefined, { "a2a-version": "1.0" });
    expect(same.json).toEqual(res.json);
  });

  it("is signed by the gateway with the key it publishes, as the SDK verifies", async () => {
    const card = (await v1Card(agentId)).json as AgentCard;
    expect(card.signatures).toHaveLength(1);
    const jwks = await call("GET", "/v1/receipts/jwks");
    const verify = verifyAgentCardSignature(async (kid) => {
      const key = (jwks.json.keys as Array<{ kid: string }>).find((k) => k.kid === kid);
      if (!key) throw new Error("unknown kid");
      return key as JWK;
    });
    await expect(verify(card)).resolves.toBeUndefined();
    await expect(verify({ ...card, name: "Someone else" })).rejects.toThrow();
  });

  it("answers v0.3 clients in the v0.3 shape", async () => {
    const res = await call("GET", `/v1/proxy/${agentId}/.well-known/agent-card.json`);
    expect(res.json).toMatchObject({
      url: `${gw.url}/v1/proxy/${agentId}/stream`,
      preferredTransport: "JSONRPC",
    });
    expect(res.json.additionalInterfaces).toBeUndefined();
    expect(res.json.security).toEqual([{ gateway: [] }]);
    expect(res.json.securitySchemes.gateway).toMatchObject({ type: "http", scheme: "bearer" });
  });

  it("is cached, and fetched again after the agent was written", async () => {
    const fresh = await createAgent(call, { upstream_url: up.url, protocol: "a2a" });
    const before = cardFetches();
    await v1Card(fresh);
    await v1Card(fresh);
    expect(cardFetches()).toBe(before + 1);
    expect((await call("PATCH", `/v1/agents/${fresh}`, { description: "changed" })).status).toBe(200);
    await v1Card(fresh);
    expect(cardFetches()).toBe(before + 2);
  });

  it("takes the official client to the gateway (and only there)", async () => {
    const client = await a2aClient(gw, call, agentId);
    const task = await client.sendMessage({ message: userMessage("via card") } as never);
    expect((task as { id: string }).id).toBeTruthy();
    expect(up.calls("SendMessage").at(-1)?.headers["x-gateway-agent-id"]).toBe(agentId);
  });
});

describe("upstream cards the gateway cannot serve", () => {
  const odds = async (kind: string) =>
    createAgent(call, {
      upstream_url: `${odd.url}/a2a`,
      card_url: `${odd.url}/${kind}/card.json`,
      protocol: "a2a",
    });

  it.each(["text", "huge", "array"])("answers 502 for a card that is %s", async (kind) => {
    const id = await odds(kind);
    for (const res of [await v1Card(id), await call("GET", `/v1/agents/${id}/card`)]) {
      expect(res.status).toBe(502);
      expect(res.json).toEqual({ error: "agent card unavailable" });
    }
  });

  it("answers 502 when the card's host does not answer", async () => {
    const id = await createAgent(call, { upstream_url: "http://127.0.0.1:9/a2a", protocol: "a2a" });
    expect((await v1Card(id)).json).toEqual({ error: "agent card unavailable" });
  });

  it("points interfaces that named other hosts at the gateway only", async () => {
    const res = await v1Card(await odds("elsewhere"));
    expect(res.status).toBe(200);
    expect(JSON.stringify(res.json)).not.toContain("evil.example");
    expect(res.json.supportedInterfaces).toHaveLength(1);
  });

  it("refuses agents that are not A2A, and a card_url on them", async () => {
    const http = await createAgent(call, { upstream_url: up.url });
    expect((await v1Card(http)).status).toBe(400);
    const bad = await call("POST", "/v1/agents", { name: "x", upstream_url: up.url, card_url: up.origin });
    expect(bad.status).toBe(400);
    expect(bad.json.error).toContain("card_url");
    const meta = await call("POST", "/v1/agents", {
      name: "x",
      protocol: "a2a",
      upstream_url: up.url,
      card_url: "http://169.254.169.254/card.json",
    });
    expect(meta.status).toBe(400);
  });
});
