import { DomainError } from "@gw/core";
import { describe, expect, it } from "vitest";
import {
  isRetryableMcpMethod,
  MCP_NAME_MAX_BYTES,
  MCP_TASK_ID_MAX_BYTES,
  parseMcpRequest,
} from "../src/parse.ts";

const bytes = (v: unknown) => new TextEncoder().encode(typeof v === "string" ? v : JSON.stringify(v));

/** The error a caller would see: kind (→ HTTP status) and message. */
function refusal(body: unknown): { kind: string; message: string } {
  try {
    parseMcpRequest(body instanceof Uint8Array ? body : bytes(body));
  } catch (e) {
    if (e instanceof DomainError) return { kind: e.kind, message: e.message };
    throw e;
  }
  throw new Error("expected the body to be refused");
}

describe("parseMcpRequest: accepted messages", () => {
  it("reads the method and id of a request", () => {
    const msg = parseMcpRequest(
      bytes({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18" } }),
    );
    expect(msg).toEqual({
      kind: "request",
      method: "initialize",
      tool: null,
      name: null,
      revision: null,
      id: 1,
      isNotification: false,
      taskId: null,
      taskAugmented: false,
    });
  });

  it("keeps a string id as a string", () => {
    const msg = parseMcpRequest(bytes({ jsonrpc: "2.0", id: "abc-1", method: "tools/list" }));
    expect(msg).toMatchObject({ kind: "request", method: "tools/list", id: "abc-1" });
  });

  it("records the tool of a tools/call", () => {
    const msg = parseMcpRequest(
      bytes({
        jsonrpc: "2.0",
        id: 7,
        method: "tools/call",
        params: { name: "echo", arguments: { text: "hi" } },
      }),
    );
    expect(msg).toEqual({
      kind: "request",
      method: "tools/call",
      tool: "echo",
      name: "echo",
      revision: null,
      id: 7,
      arguments: { text: "hi" },
      isNotification: false,
      taskId: null,
      taskAugmented: false,
    });
  });

  it("accepts a tool name of exactly the limit, counted in bytes", () => {
    const name = "é".repeat(MCP_NAME_MAX_BYTES / 2); // two bytes each
    const msg = parseMcpRequest(bytes({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name } }));
    expect(msg.tool).toBe(name);
  });

  it("reads a notification as a method without an id", () => {
    const msg = parseMcpRequest(bytes({ jsonrpc: "2.0", method: "notifications/initialized" }));
    expect(msg).toEqual({
      kind: "notification",
      method: "notifications/initialized",
      tool: null,
      name: null,
      id: null,
      isNotification: true,
    });
  });

  it("reads the name an Mcp-Name header must match: prompts/get name, resources/read uri, a task's id", () => {
    const prompt = parseMcpRequest(
      bytes({ jsonrpc: "2.0", id: 3, method: "prompts/get", params: { name: "greet" } }),
    );
    expect(prompt.name).toBe("greet");
    const resource = parseMcpRequest(
      bytes({ jsonrpc: "2.0", id: 4, method: "resources/read", params: { uri: "file:///a" } }),
    );
    expect(resource.name).toBe("file:///a");
    const task = parseMcpRequest(
      bytes({ jsonrpc: "2.0", id: 6, method: "tasks/get", params: { taskId: "task-1" } }),
    );
    expect(task.name).toBe("task-1");
    expect(parseMcpRequest(bytes({ jsonrpc: "2.0", id: 5, method: "tools/list" })).name).toBeNull();
  });

  it("accepts array params, which JSON-RPC allows", () => {
    expect(
      parseMcpRequest(bytes({ jsonrpc: "2.0", id: 2, method: "custom/op", params: [1, 2] })).method,
    ).toBe("custom/op");
  });

  it("accepts a client's response to a server request, with no method to record", () => {
    const result = parseMcpRequest(bytes({ jsonrpc: "2.0", id: 0, result: { action: "accept" } }));
    expect(result).toEqual({
      kind: "response",
      method: null,
      tool: null,
      name: null,
      id: 0,
      isNotification: false,
    });
    const error = parseMcpRequest(
      bytes({ jsonrpc: "2.0", id: "s-1", error: { code: -32601, message: "not supported" } }),
    );
    expect(error).toMatchObject({ kind: "response", method: null, id: "s-1" });
  });

  it("tolerates whitespace and a UTF-8 byte order mark around the JSON", () => {
    const body = new Uint8Array([
      0xef,
      0xbb,
      0xbf,
      ...bytes('\n  {"jsonrpc":"2.0","id":3,"method":"ping"}  \r\n'),
    ]);
    expect(parseMcpRequest(body)).toMatchObject({ method: "ping", id: 3 });
  });
});

describe("parseMcpRequest: refused bodies (400)", () => {
  const cases: Array<[string, unknown, RegExp]> = [
    ["an empty body", "", /valid JSON/],
    ["garbage", "not json at all", /valid JSON/],
    ["truncated JSON", '{"jsonrpc":"2.0","id":1,', /valid JSON/],
    ["a batch", [{ jsonrpc: "2.0", id: 1, method: "tools/list" }], /batches are not supported/],
    ["an empty batch", [], /batches are not supported/],
    ["a JSON string", JSON.stringify("hello"), /message object/],
    ["null", null, /message object/],
    ["a number", 42, /message object/],
    ["a missing jsonrpc", { id: 1, method: "tools/list" }, /jsonrpc must be "2.0"/],
    ["jsonrpc 1.0", { jsonrpc: "1.0", id: 1, method: "tools/list" }, /jsonrpc must be "2.0"/],
    ["jsonrpc as a number", { jsonrpc: 2.0, id: 1, method: "tools/list" }, /jsonrpc must be "2.0"/],
    ["a numeric method", { jsonrpc: "2.0", id: 1, method: 5 }, /method must be a non-empty string/],
    ["an empty method", { jsonrpc: "2.0", id: 1, method: "" }, /method must be a non-empty string/],
    ["a null id", { jsonrpc: "2.0", id: null, method: "tools/list" }, /id must be a string or a number/],
    [
      "an object id",
      { jsonrpc: "2.0", id: { a: 1 }, method: "tools/list" },
      /id must be a string or a number/,
    ],
    ["string params", { jsonrpc: "2.0", id: 1, method: "tools/list", params: "x" }, /params must be/],
    ["null params", { jsonrpc: "2.0", id: 1, method: "tools/list", params: null }, /params must be/],
    ["tools/call without params", { jsonrpc: "2.0", id: 1, method: "tools/call" }, /requires params\.name/],
    [
      "tools/call without a name",
      { jsonrpc: "2.0", id: 1, method: "tools/call", params: { arguments: {} } },
      /requires params\.name/,
    ],
    [
      "tools/call with a numeric name",
      { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: 12 } },
      /requires params\.name/,
    ],
    [
      "tools/call with an empty name",
      { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "" } },
      /requires params\.name/,
    ],
    [
      "tools/call with array params",
      { jsonrpc: "2.0", id: 1, method: "tools/call", params: ["echo"] },
      /requires params\.name/,
    ],
    [
      "tools/call as a notification",
      { jsonrpc: "2.0", method: "tools/call", params: { name: "echo" } },
      /not a notification/,
    ],
    [
      "a request that also carries a result",
      { jsonrpc: "2.0", id: 1, method: "ping", result: {} },
      /must not carry result or error/,
    ],
    [
      "an object with neither method nor result",
      { jsonrpc: "2.0", id: 1 },
      /request, notification or response/,
    ],
    ["a response with result and error", { jsonrpc: "2.0", id: 1, result: {}, error: {} }, /not both/],
    ["a response with a malformed error", { jsonrpc: "2.0", id: 1, error: "boom" }, /integer code/],
    ["a response with a boolean id", { jsonrpc: "2.0", id: true, result: {} }, /id must be/],
  ];

  for (const [name, body, message] of cases) {
    it(`refuses ${name}`, () => {
      const r = refusal(body);
      expect(r.kind).toBe("invalid");
      expect(r.message).toMatch(message);
    });
  }

  it("refuses invalid UTF-8", () => {
    const body = new Uint8Array([...bytes('{"jsonrpc":"2.0","id":1,"method":"'), 0xff, 0xfe, ...bytes('"}')]);
    expect(refusal(body)).toMatchObject({ kind: "invalid", message: expect.stringMatching(/valid JSON/) });
  });

  it("refuses a tool name one byte over the limit, without echoing it", () => {
    const name = `${"a".repeat(MCP_NAME_MAX_BYTES - 1)}é`; // 257 bytes, 256 characters
    const r = refusal({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name } });
    expect(r).toEqual({ kind: "invalid", message: "params.name must be at most 256 bytes" });
  });

  it("refuses a huge tool name", () => {
    const r = refusal({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "x".repeat(100_000) } });
    expect(r.message).toBe("params.name must be at most 256 bytes");
  });

  it("refuses an unpaired surrogate in the id, method or tool name (Postgres json cannot hold it)", () => {
    const id = refusal({ jsonrpc: "2.0", id: "\ud800", method: "tools/call", params: { name: "echo" } });
    expect(id).toEqual({ kind: "invalid", message: "id must not contain unpaired surrogates" });
    expect(refusal({ jsonrpc: "2.0", id: 1, method: "tools/\udc00" }).message).toBe(
      "method must not contain unpaired surrogates",
    );
    const name = refusal({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "e\ud83d" } });
    expect(name.message).toBe("params.name must not contain unpaired surrogates");
    // A surrogate pair is one character and fine.
    const pair = { jsonrpc: "2.0", id: "\ud83d\ude00", method: "tools/call", params: { name: "ok" } };
    expect(parseMcpRequest(bytes(pair)).id).toBe("\ud83d\ude00");
  });

  it("refuses a NUL in a string request id (stored with the call's job in Postgres)", () => {
    const r = refusal({ jsonrpc: "2.0", id: "\u0000", method: "tools/call", params: { name: "echo" } });
    expect(r).toEqual({ kind: "invalid", message: "id must not contain NUL characters" });
  });

  it("refuses a NUL in the method or the tool name (they are recorded in Postgres)", () => {
    expect(refusal({ jsonrpc: "2.0", id: 1, method: "tools/\u0000list" }).message).toBe(
      "method must not contain NUL characters",
    );
    expect(refusal({ jsonrpc: "2.0", method: "notifications/\u0000x" }).kind).toBe("invalid");
    const r = refusal({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "echo\u0000" } });
    expect(r).toEqual({ kind: "invalid", message: "params.name must not contain NUL characters" });
  });

  it("refuses a method over the limit", () => {
    const r = refusal({ jsonrpc: "2.0", id: 1, method: "m".repeat(MCP_NAME_MAX_BYTES + 1) });
    expect(r.message).toBe("method must be at most 256 bytes");
  });

  it("never echoes the body in its message", () => {
    const secret = "sk-live-do-not-echo";
    for (const body of [
      secret,
      { jsonrpc: secret, id: 1, method: "x" },
      [{ secret }],
      { jsonrpc: "2.0", id: 1 },
    ]) {
      expect(refusal(body).message).not.toContain(secret);
    }
  });
});

describe("isRetryableMcpMethod", () => {
  it("allows the discovery calls and initialize", () => {
    for (const m of ["initialize", "tools/list", "resources/list", "prompts/list"]) {
      expect(isRetryableMcpMethod(m)).toBe(true);
    }
  });

  it("never retries tools/call, other methods, notifications or responses", () => {
    for (const m of [
      "tools/call",
      "resources/read",
      "prompts/get",
      "ping",
      "notifications/initialized",
      "TOOLS/LIST",
    ]) {
      expect(isRetryableMcpMethod(m)).toBe(false);
    }
    expect(isRetryableMcpMethod(null)).toBe(false);
  });
});

describe("parseMcpRequest: the caller's trace context in params._meta", () => {
  const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
  const request = (meta: unknown) => ({
    jsonrpc: "2.0",
    id: 1,
    method: "tools/call",
    params: { name: "echo", arguments: {}, _meta: meta },
  });

  it("reads traceparent and tracestate as sent (validated by the tracing side)", () => {
    expect(parseMcpRequest(bytes(request({ traceparent: tp, tracestate: "a=b" }))).kind).toBe("request");
    expect(parseMcpRequest(bytes(request({ traceparent: tp, tracestate: "a=b" })))).toMatchObject({
      traceContext: { traceparent: tp, tracestate: "a=b" },
    });
    expect(parseMcpRequest(bytes(request({ traceparent: "not one" })))).toMatchObject({
      traceContext: { traceparent: "not one" },
    });
  });

  it("has none when _meta, its traceparent or params are absent or of another type", () => {
    for (const meta of [undefined, null, "x", [tp], { traceparent: 1 }, { tracestate: "a=b" }]) {
      expect(parseMcpRequest(bytes(request(meta))), JSON.stringify(meta)).not.toHaveProperty("traceContext");
    }
    const list = parseMcpRequest(bytes({ jsonrpc: "2.0", id: 2, method: "tools/list" }));
    expect(list).not.toHaveProperty("traceContext");
  });
});

describe("parseMcpRequest: MCP tasks (docs/mcp.md, Tasks)", () => {
  const req = (method: string, params: unknown) =>
    parseMcpRequest(bytes({ jsonrpc: "2.0", id: 1, method, params }));

  it("names the task of every task method, and marks a task-augmented tools/call", () => {
    for (const m of ["tasks/get", "tasks/result", "tasks/update", "tasks/cancel"]) {
      expect(req(m, { taskId: "t-1" })).toMatchObject({ taskId: "t-1", taskAugmented: false });
    }
    expect(req("tasks/list", { taskId: "t-1" })).toMatchObject({ taskId: null });
    expect(req("tools/call", { name: "w", task: { ttl: 1 } })).toMatchObject({
      taskId: null,
      taskAugmented: true,
    });
    expect(req("tools/call", { name: "w", task: "no" })).toMatchObject({ taskAugmented: false });
  });

  it("records no task id the record cannot hold; the request is still accepted", () => {
    for (const taskId of [7, "", "a".repeat(MCP_TASK_ID_MAX_BYTES + 1), "nul\u0000", "\ud800", null]) {
      expect(req("tasks/get", { taskId }), JSON.stringify(taskId)).toMatchObject({
        kind: "request",
        taskId: null,
      });
    }
  });
});
