import { randomBytes } from "node:crypto";
import type { Res, TestApp } from "@gw/testkit";
import { expect } from "vitest";
import { type Caller, createAgent, pollDone, recordDone } from "../helpers.ts";

export type Mode = "streaming" | "transactional";
export const MODES: Mode[] = ["streaming", "transactional"];

/** A tools/call request as a client sends it (Accept for JSON and SSE answers). */
export function toolCall(name: string, id: number | string = 7, args: Record<string, unknown> = {}) {
  return { jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } };
}

const ACCEPT = { accept: "application/json, text/event-stream" };

/**
 * One JSON-RPC request through the gateway on either path: the caller's answer (the relayed one,
 * or the polled result's body), its warning header, and the invocation record once terminal.
 */
export async function send(
  call: Caller,
  agentId: string,
  mode: Mode,
  body: unknown,
): Promise<{ status: number; text: string; warning: string | null; record: Res }> {
  if (mode === "streaming") {
    const res = await call("POST", `/v1/proxy/${agentId}/stream`, body, ACCEPT);
    const id = res.headers.get("x-gateway-invocation-id") as string;
    return {
      status: res.status,
      text: res.text,
      warning: res.headers.get("x-gateway-policy-warning"),
      record: await recordDone(call, id),
    };
  }
  const accepted = await call("POST", `/v1/proxy/${agentId}`, body, ACCEPT);
  expect(accepted.status, accepted.text).toBe(202);
  const done = await pollDone(call, agentId, accepted.json.invocation_id);
  const b64 = done.json.response?.body_b64 as string | undefined;
  return {
    status: done.json.response?.status ?? 0,
    text: b64 ? Buffer.from(b64, "base64").toString("utf8") : "",
    warning: null,
    record: await recordDone(call, accepted.json.invocation_id),
  };
}

/** The JSON-RPC response in an answer text: the JSON body, or the data of its SSE `message` event. */
export function response(text: string): Record<string, unknown> {
  const trimmed = text.trim();
  if (trimmed.startsWith("{")) return JSON.parse(trimmed);
  const data = trimmed
    .split(/\n\n/)
    .map((e) =>
      e
        .split("\n")
        .filter((l) => l.startsWith("data:"))
        .map((l) => l.slice(5).trimStart())
        .join("\n"),
    )
    .find((d) => d.startsWith("{") && d.includes('"id"'));
  return JSON.parse(data ?? "null");
}

export function mcpAgent(call: Caller, url: string, extra: Record<string, unknown> = {}) {
  return createAgent(call, {
    upstream_url: url,
    protocol: "mcp",
    mcp_transport: "streamable_http",
    ...extra,
  });
}

export async function putPolicy(call: Caller, doc: Record<string, unknown>): Promise<void> {
  const res = await call("PUT", "/v1/policy", doc);
  expect(res.status, res.text).toBe(200);
}

export const BLOCKED = {
  content: [{ type: "text", text: "blocked by gateway policy" }],
  isError: true,
};

/** A distinctive value nobody else could produce by accident. */
export const marker = (tag: string) => `${tag}-${randomBytes(6).toString("hex")}`;

/** Asserts no stored row (invocations, results, captures) of the tenant holds `text`. */
export async function notStored(app: TestApp, tenant: string, text: string): Promise<void> {
  for (const table of ["invocations", "invocation_results"]) {
    const [row] = await app.rt.store.query(
      `select count(*)::int as n from "${table}" t where t.tenant_id = $3 and (t::text like $1 or t::text like $2)`,
      [`%${text}%`, `%${Buffer.from(text).toString("hex")}%`, tenant],
    );
    expect(row?.n, `${table} holds an unredacted copy`).toBe(0);
  }
}
