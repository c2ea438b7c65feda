import { expect } from "vitest";
import type { Mode } from "../answers/support.ts";
import { type Caller, pollDone, recordDone } from "../helpers.ts";
import { rpc, V1 } from "./helpers.ts";

export type Streamed = {
  status: number;
  text: string;
  headers: Headers | null;
  record: Record<string, unknown>;
};

/** One streamed A2A request on either path: the caller's answer (relayed, or the polled result's) and its record. */
export async function stream(
  call: Caller,
  agentId: string,
  mode: Mode,
  body: string,
  headers: Record<string, string> = V1,
): Promise<Streamed> {
  const h = { ...headers, accept: "text/event-stream" };
  if (mode === "streaming") {
    const res = await call("POST", `/v1/proxy/${agentId}/stream`, body, h);
    const id = res.headers.get("x-gateway-invocation-id") as string;
    return {
      status: res.status,
      text: res.text,
      headers: res.headers,
      record: (await recordDone(call, id)).json,
    };
  }
  const accepted = await call("POST", `/v1/proxy/${agentId}`, body, h);
  expect(accepted.status, accepted.text).toBe(202);
  const done = await pollDone(call, agentId, accepted.json.invocation_id);
  const b64 = (done.json.response?.body_b64 as string | undefined) ?? "";
  return {
    status: done.json.response?.status ?? 0,
    text: Buffer.from(b64, "base64").toString("utf8"),
    headers: null,
    record: (await recordDone(call, accepted.json.invocation_id)).json,
  };
}

/** The data of each event of an SSE text, parsed as JSON. */
export function events(text: string): Array<Record<string, unknown>> {
  return text
    .split(/\r\n\r\n|\n\n|\r\r/)
    .map((e) =>
      e
        .split(/\r\n|\n|\r/)
        .filter((l) => l.startsWith("data:"))
        .map((l) => l.slice(5).replace(/^ /, ""))
        .join("\n"),
    )
    .filter((d) => d !== "")
    .map((d) => JSON.parse(d));
}

export const streamMessage = (text: string, id: string | number = 1, messageId = "m-1") =>
  rpc("SendStreamingMessage", { message: { messageId, role: "ROLE_USER", parts: [{ text }] } }, id);

export const captured = (record: Record<string, unknown>) =>
  Buffer.from(String(record.resp_body ?? ""), "base64").toString("utf8");

export const BLOCKED = (id: string | number) => ({
  jsonrpc: "2.0",
  id,
  error: { code: -32603, message: "blocked by gateway policy" },
});
