import { DomainError } from "@gw/core";
import { describe, expect, it } from "vitest";
import { checkMcpHeaders, type McpHeaders } from "../src/headers.ts";
import { parseMcpRequest } from "../src/parse.ts";

const META = { "io.modelcontextprotocol/protocolVersion": "2026-07-28" };

function message(method: string, params: Record<string, unknown> = {}, modern = true) {
  const body = { jsonrpc: "2.0", id: 4, method, params: modern ? { ...params, _meta: META } : params };
  return parseMcpRequest(new TextEncoder().encode(JSON.stringify(body)));
}

/** The JSON-RPC error body of a refusal, or null when the headers pass. */
function refusal(msg: ReturnType<typeof message>, headers: Partial<McpHeaders>): unknown {
  try {
    checkMcpHeaders(msg, { protocolVersion: null, method: null, name: null, ...headers });
    return null;
  } catch (e) {
    if (!(e instanceof DomainError)) throw e;
    expect(e.kind).toBe("invalid");
    return e.body;
  }
}

describe("checkMcpHeaders", () => {
  const call = message("tools/call", { name: "echo" });
  const both = { method: "tools/call", name: "echo" };

  it("passes headers that mirror the body, the name in its Base64 form too", () => {
    expect(refusal(call, both)).toBeNull();
    expect(refusal(call, { ...both, name: "=?base64?ZWNobw==?=" })).toBeNull();
    expect(
      refusal(message("tasks/cancel", { taskId: "t-1" }), { method: "tasks/cancel", name: "t-1" }),
    ).toBeNull();
  });

  it("refuses a mismatch, a missing header of 2026-07-28, or a Base64 form that does not decode, with -32020", () => {
    for (const headers of [
      { ...both, method: "tools/list" },
      { ...both, name: "Echo" },
      { method: "tools/call" },
      { name: "echo" },
      { ...both, name: "=?base64?ZWNobw?=" },
      { ...both, name: "=?base64?/w==?=" }, // not UTF-8
    ]) {
      expect(refusal(call, headers), JSON.stringify(headers)).toMatchObject({
        jsonrpc: "2.0",
        id: 4,
        error: { code: -32020 },
      });
    }
  });

  it("asks an older revision's request, or a method it cannot place a name for, only for what it sends", () => {
    const older = message("tools/call", { name: "echo" }, false);
    expect(refusal(older, {})).toBeNull();
    expect(refusal(older, { protocolVersion: "2025-11-25" })).toBeNull();
    expect(refusal(older, { protocolVersion: "2026-07-28" })).not.toBeNull();
    expect(refusal(older, { name: "other" })).not.toBeNull();
    const future = message("vendor/op", { name: "x" });
    expect(refusal(future, { method: "vendor/op" })).toBeNull();
    expect(refusal(future, { method: "vendor/op", name: "anything" })).toBeNull();
    // A body without a name needs no Mcp-Name.
    expect(refusal(message("prompts/get"), { method: "prompts/get" })).toBeNull();
  });
});
