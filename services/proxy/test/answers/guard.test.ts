// @stores once: answer guardrails on the relay.
import { randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { type AnswerUpstream, startAnswerUpstream, type TestApp } from "@gw/testkit";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Caller, caller, startGateway } from "../helpers.ts";
import {
  BLOCKED,
  MODES,
  marker,
  mcpAgent,
  notStored,
  putPolicy,
  response,
  send,
  toolCall,
} from "./support.ts";

// Answer guardrails (docs/policy.md "Answer guardrails"): what an official-SDK MCP server answers
// is judged before the caller sees it, on both paths, JSON and SSE, and only the redacted or
// blocked answer is ever stored.

let gw: TestApp;
let sse: AnswerUpstream;
let json: AnswerUpstream;
let ordered: { url: string; server: Server };
const CARD = "4111 1111 1111 1111";
const IBAN = "GB82 WEST 1234 5698 7654 32";

beforeAll(async () => {
  gw = await startGateway();
  sse = await startAnswerUpstream();
  json = await startAnswerUpstream({ jsonResponse: true });
  ordered = await startOrderedUpstream();
});
afterAll(async () => {
  ordered?.server.closeAllConnections();
  await Promise.allSettled([sse?.close(), json?.close(), new Promise((r) => ordered?.server.close(r))]);
  await gw?.close();
});

/**
 * An MCP server written by hand (the SDK orders a result's members itself): a tools/call result
 * whose `structuredContent` comes before `content` in the JSON text, answered as JSON or as one SSE
 * event (`/<json|sse>/<email>`).
 */
async function startOrderedUpstream(): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const [, framing, email] = (req.url ?? "").split("/");
      const { id } = JSON.parse(Buffer.concat(chunks).toString()) as { id: unknown };
      const text = `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"structuredContent":{"to":"${email}","note":"to ${email} and ${email}"},"content":[{"type":"text","text":"mail ${email} 🦊 ${email}"}]}}`;
      if (framing === "sse")
        res.writeHead(200, { "content-type": "text/event-stream" }).end(`event: message\ndata: ${text}\n\n`);
      else res.writeHead(200, { "content-type": "application/json" }).end(text);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

async function tenantWith(answerRules: unknown[]): Promise<Caller> {
  const call = await caller(gw, ["invocations:read_body"]);
  await putPolicy(call, { answer_rules: answerRules });
  return call;
}

describe("redact", () => {
  for (const [kind, up] of [
    ["SSE", () => sse],
    ["JSON", () => json],
  ] as const) {
    for (const mode of MODES) {
      it(`${mode}, ${kind}: PII, the injected secret and a pattern become [redacted:<kind>]; only that is stored`, async () => {
        const call = await tenantWith([
          {
            detect: { secrets: true, pii: ["email", "credit_card", "iban"], patterns: ["ticket-[0-9]+"] },
            action: "redact",
          },
        ]);
        const secret = marker("sekrit");
        const cred = await call("POST", "/v1/credentials", { name: marker("c"), kind: "bearer", secret });
        const email = `${marker("bob")}@example.com`;
        up().toolResult = () => ({
          content: [
            { type: "text", text: `mail ${email}, card ${CARD}, iban ${IBAN}` },
            { type: "image", data: "aGVsbG8=", mimeType: "image/png" },
          ],
          structuredContent: { nested: { list: [`token ${secret}`, "ticket-42 🦊 \u{10FFFD}"] }, n: 1.5e300 },
        });
        const agent = await mcpAgent(call, up().url, { credential_ref: cred.json.id, capture_bodies: true });
        const out = await send(call, agent, mode, toolCall("lookup"));
        expect(out.status).toBe(200);
        const result = response(out.text).result as Record<string, unknown>;
        expect(result.content).toEqual([
          { type: "text", text: "mail [redacted:email], card [redacted:credit_card], iban [redacted:iban]" },
          { type: "image", data: "aGVsbG8=", mimeType: "image/png" },
        ]);
        expect(result.structuredContent).toEqual({
          nested: { list: ["token [redacted:secret]", "[redacted:pattern] 🦊 \u{10FFFD}"] },
          n: 1.5e300,
        });
        // Everything but the redacted strings is kept as the upstream wrote it.
        expect(out.text).toContain('"n":1.5e+300');
        expect(out.record.json).toMatchObject({
          answer_action: "redacted",
          answer_findings: { email: 1, credit_card: 1, iban: 1, secret: 1, pattern: 1 },
        });
        // The captured copy is what the caller received.
        const captured = Buffer.from(out.record.json.resp_body, "base64").toString();
        expect(captured).toContain("mail [redacted:email]");
        expect(captured).not.toContain(email);
        for (const leaked of [email, CARD, secret, "ticket-42"]) await notStored(gw, call.tenant, leaked);
      });
    }
  }

  for (const mode of MODES) {
    for (const framing of ["json", "sse"] as const) {
      it(`${mode}, ${framing}: structuredContent written before content: both copies are redacted in place`, async () => {
        const call = await tenantWith([{ detect: { pii: ["email"] }, action: "redact" }]);
        const email = `${marker("sc")}@example.com`;
        const agent = await mcpAgent(call, `${ordered.url}/${framing}/${email}`, { capture_bodies: true });
        const out = await send(call, agent, mode, toolCall("lookup", "sc"));
        expect(out.status).toBe(200);
        // The upstream's order is kept, structuredContent first, each text rewritten in its place.
        expect(out.text.indexOf('"structuredContent"')).toBeGreaterThan(-1);
        expect(out.text.indexOf('"structuredContent"')).toBeLessThan(out.text.indexOf('"content"'));
        const result = response(out.text).result as Record<string, unknown>;
        const redacted = { to: "[redacted:email]", note: "to [redacted:email] and [redacted:email]" };
        expect(result.structuredContent).toEqual(redacted);
        expect(result.content).toEqual([{ type: "text", text: `mail [redacted:email] 🦊 [redacted:email]` }]);
        expect(out.text).not.toContain(email);
        expect(out.record.json).toMatchObject({ answer_action: "redacted", answer_findings: { email: 5 } });
        await notStored(gw, call.tenant, email);
      });
    }
  }

  it("the official SDK client reads a redacted SSE answer, resources/read and prompts/get too", async () => {
    const call = await tenantWith([{ detect: { pii: ["us_ssn", "phone"] }, action: "redact" }]);
    const agent = await mcpAgent(call, sse.url);
    sse.toolResult = () => ({ content: [{ type: "text", text: "ssn 536-22-1234, call +1 415 555 2671" }] });
    sse.text = "resource ssn 536-22-1234";
    const transport = new StreamableHTTPClientTransport(new URL(`${gw.url}/v1/proxy/${agent}/stream`), {
      requestInit: { headers: { Authorization: `Bearer ${call.token}` } },
    });
    const client = new Client({ name: "guard-test", version: "1.0.0" });
    await client.connect(transport);
    try {
      const r = await client.callTool({ name: "whois", arguments: {} });
      expect(r.content).toEqual([{ type: "text", text: "ssn [redacted:us_ssn], call [redacted:phone]" }]);
      const res = await client.readResource({ uri: "file:///a" });
      expect(res.contents[0]).toMatchObject({ text: "resource ssn [redacted:us_ssn]" });
      const p = await client.getPrompt({ name: "p" });
      expect(p.messages[0]?.content).toEqual({ type: "text", text: "resource ssn [redacted:us_ssn]" });
    } finally {
      await client.close();
    }
  });
});

describe("block and warn", () => {
  for (const mode of MODES) {
    it(`${mode}: block answers the MCP tool error with the request's id; nothing of the answer is stored`, async () => {
      const call = await tenantWith([
        { match: { tools: ["leaky*"] }, detect: { secrets: true }, action: "block" },
      ]);
      const token = `ghp_${randomBytes(18).toString("hex")}`;
      sse.toolResult = () => ({ content: [{ type: "text", text: `here: ${token}` }] });
      const agent = await mcpAgent(call, sse.url, { capture_bodies: true });
      const out = await send(call, agent, mode, toolCall("leaky-tool", "req-9"));
      expect(response(out.text)).toEqual({ jsonrpc: "2.0", id: "req-9", result: BLOCKED });
      expect(out.record.json).toMatchObject({ answer_action: "blocked", answer_findings: { secret: 1 } });
      await notStored(gw, call.tenant, token);
      // A tool the rule does not match passes verbatim, unrecorded.
      const other = await send(call, agent, mode, toolCall("safe"));
      expect(response(other.text).result).toEqual({ content: [{ type: "text", text: `here: ${token}` }] });
      expect(other.record.json.answer_action).toBeNull();
    });
  }

  it("warn passes the answer with X-Gateway-Policy-Warning on the streaming path", async () => {
    const call = await tenantWith([{ detect: { pii: ["ip_address"] }, action: "warn" }]);
    json.toolResult = () => ({ content: [{ type: "text", text: "host 10.1.2.3" }] });
    const agent = await mcpAgent(call, json.url);
    const out = await send(call, agent, "streaming", toolCall("t"));
    expect(response(out.text).result).toEqual({ content: [{ type: "text", text: "host 10.1.2.3" }] });
    expect(out.warning).toBe("answer rule 1");
    expect(out.record.json).toMatchObject({ answer_action: "warned", answer_findings: { ip_address: 1 } });
  });

  it("the first rule with a finding acts; an answer with none passes byte for byte", async () => {
    const call = await tenantWith([
      { detect: { patterns: ["never-there"] }, action: "block" },
      { detect: { pii: ["email"] }, action: "redact" },
    ]);
    const agent = await mcpAgent(call, json.url);
    json.toolResult = () => ({ content: [{ type: "text", text: "a@b.io" }] });
    const hit = await send(call, agent, "streaming", toolCall("t"));
    expect(hit.record.json.answer_action).toBe("redacted");
    json.toolResult = () => ({ content: [{ type: "text", text: "nothing to see" }] });
    const clean = await send(call, agent, "streaming", toolCall("t"));
    expect(clean.record.json.answer_action).toBeNull();
    expect(response(clean.text).result).toEqual({ content: [{ type: "text", text: "nothing to see" }] });
  });
});
