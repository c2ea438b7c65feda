import { context, ROOT_CONTEXT, SpanKind, trace } from "@opentelemetry/api";
import { describe, expect, it } from "vitest";
import {
  isValidTraceparent,
  type McpTraced,
  mcpAttributes,
  mcpSpanName,
  startMovableSpan,
  traceMcpCall,
} from "../src/mcp.ts";

const call = { method: "tools/call", tool: "get_weather", name: "get_weather", id: 7 };

describe("MCP span names and attributes (OpenTelemetry MCP and GenAI conventions)", () => {
  it("names the span {mcp.method.name} {target}: the tool, the prompt, else the method alone", () => {
    expect(mcpSpanName(call)).toBe("tools/call get_weather");
    expect(mcpSpanName({ method: "prompts/get", tool: null, name: "greet", id: 1 })).toBe(
      "prompts/get greet",
    );
    // A resource URI is no target: it is the caller's text, possibly with a token in it.
    expect(mcpSpanName({ method: "resources/read", tool: null, name: "file:///x?t=1", id: 1 })).toBe(
      "resources/read",
    );
    expect(mcpSpanName({ method: "tools/list", tool: null, name: null, id: 1 })).toBe("tools/list");
    expect(mcpSpanName({ method: null, tool: null, name: null, id: 1 })).toBeNull();
  });

  it("a tools/call carries the method, tool, execute_tool, request id, protocol version and session", () => {
    expect(
      mcpAttributes(call, {
        "mcp-protocol-version": "2025-06-18",
        "mcp-session-id": "s-1",
        authorization: "x",
      }),
    ).toEqual({
      "mcp.method.name": "tools/call",
      "gen_ai.tool.name": "get_weather",
      "gen_ai.operation.name": "execute_tool",
      "jsonrpc.request.id": "7",
      "mcp.protocol.version": "2025-06-18",
      "mcp.session.id": "s-1",
      "network.transport": "tcp",
      "network.protocol.name": "http",
    });
    expect(
      mcpAttributes({ method: "resources/read", tool: null, name: "file:///secret?token=t", id: "r" }),
    ).toEqual({
      "mcp.method.name": "resources/read",
      "jsonrpc.request.id": "r",
      "network.transport": "tcp",
      "network.protocol.name": "http",
    });
  });

  it("accepts a W3C traceparent and refuses malformed ones", () => {
    const ok = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    expect(isValidTraceparent(ok)).toBe(true);
    // A later version may append fields.
    expect(isValidTraceparent("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra")).toBe(true);
    for (const bad of [
      "",
      "garbage",
      `${ok}-extra`, // version 00 has exactly four fields
      "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
      "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
      "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
      "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
      "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
      ` ${ok}`,
    ])
      expect(isValidTraceparent(bad), bad).toBe(false);
  });
});

describe("with no exporter configured (no tracer provider registered)", () => {
  it("the request's span is the API's no-op span and an MCP call reads nothing of its message", () => {
    const span = startMovableSpan(
      "POST /v1/proxy/:id/stream",
      { kind: SpanKind.SERVER, attributes: {} },
      ROOT_CONTEXT,
    );
    expect(span.isRecording()).toBe(false);
    expect(span.constructor.name).toBe("NonRecordingSpan");
    const reads: PropertyKey[] = [];
    const message = new Proxy(
      {
        ...call,
        traceContext: { traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01" },
      },
      {
        get(target, key, receiver) {
          reads.push(key);
          return Reflect.get(target, key, receiver);
        },
      },
    ) as McpTraced;
    context.with(trace.setSpan(ROOT_CONTEXT, span), () => traceMcpCall(message, {}));
    traceMcpCall(message, {});
    expect(reads).toEqual([]);
  });
});
