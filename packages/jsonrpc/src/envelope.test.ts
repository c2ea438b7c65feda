import { describe, expect, it } from "vitest";
import {
  errorMessage,
  parseMessage,
  readMessage,
  responseTo,
  resultMessage,
  resultObject,
} from "./envelope.ts";
import { isRecord, parseJson } from "./guards.ts";

describe("readMessage", () => {
  it("classifies requests, notifications and both kinds of response", () => {
    expect(readMessage({ jsonrpc: "2.0", id: 1, method: "m", params: { a: 1 } })).toMatchObject({
      kind: "request",
      id: 1,
      method: "m",
      params: { a: 1 },
    });
    expect(readMessage({ jsonrpc: "2.0", method: "n", params: [1] })).toMatchObject({
      kind: "notification",
      method: "n",
      params: [1],
    });
    expect(readMessage({ jsonrpc: "2.0", id: "a", result: null })).toMatchObject({
      kind: "response",
      id: "a",
      outcome: "result",
    });
    expect(readMessage({ jsonrpc: "2.0", id: null, error: { code: -32700, message: "x" } })).toMatchObject({
      kind: "response",
      id: null,
      outcome: "error",
    });
  });

  it("says what is wrong with an envelope, never echoing it", () => {
    const cases: Array<[unknown, string]> = [
      [[{ jsonrpc: "2.0", method: "m" }], "a JSON-RPC 2.0 message must be an object"],
      ["secret-text", "a JSON-RPC 2.0 message must be an object"],
      [{ jsonrpc: "1.0", method: "m" }, 'jsonrpc must be "2.0"'],
      [{ jsonrpc: "2.0", method: "" }, "method must be a non-empty string"],
      [{ jsonrpc: "2.0", method: 5 }, "method must be a non-empty string"],
      [
        { jsonrpc: "2.0", id: 1, method: "m", result: 1 },
        "a JSON-RPC request must not carry result or error",
      ],
      [{ jsonrpc: "2.0", id: 1, method: "m", params: "p" }, "params must be an object or an array"],
      [{ jsonrpc: "2.0", id: null, method: "m" }, "id must be a string or a number"],
      [{ jsonrpc: "2.0", id: {}, method: "m" }, "id must be a string or a number"],
      [
        { jsonrpc: "2.0", id: 1, result: 1, error: {} },
        "a JSON-RPC response carries either result or error, not both",
      ],
      [
        { jsonrpc: "2.0", id: 1, error: { code: 1.5, message: "m" } },
        "error must be an object with an integer code and a string message",
      ],
      [
        { jsonrpc: "2.0", id: 1, error: "boom" },
        "error must be an object with an integer code and a string message",
      ],
      [{ jsonrpc: "2.0", id: [1], result: 1 }, "id must be a string, a number or null"],
      [{ jsonrpc: "2.0", id: 1 }, "must be a JSON-RPC 2.0 request, notification or response"],
    ];
    for (const [value, problem] of cases) {
      expect(readMessage(value), JSON.stringify(value)).toEqual({ kind: "invalid", problem });
    }
  });

  it("parses text, refusing what is not JSON", () => {
    expect(parseMessage('{"jsonrpc":"2.0","method":"n"}')).toMatchObject({ kind: "notification" });
    expect(parseMessage("{not json")).toEqual({
      kind: "invalid",
      problem: "must be a JSON-RPC 2.0 message in valid JSON",
    });
  });
});

describe("responses", () => {
  it("matches a response by id type and value", () => {
    const res = { jsonrpc: "2.0", id: 7, result: { a: 1 } };
    expect(responseTo(res, 7)).toBe(res);
    expect(responseTo(res, "7")).toBeNull();
    expect(responseTo({ jsonrpc: "2.0", id: 7, method: "m" }, 7)).toBeNull();
    expect(responseTo(undefined, 7)).toBeNull();
  });

  it("reads the result object of a success only", () => {
    expect(resultObject({ jsonrpc: "2.0", id: 1, result: { tools: [] } })).toEqual({ tools: [] });
    expect(resultObject({ jsonrpc: "2.0", id: 1, result: [] })).toBeNull();
    expect(resultObject({ jsonrpc: "2.0", id: 1, error: { code: 1, message: "m" } })).toBeNull();
    expect(resultObject({ id: 1, result: {} })).toBeNull();
  });

  it("builds responses", () => {
    expect(resultMessage(1, { a: 1 })).toEqual({ jsonrpc: "2.0", id: 1, result: { a: 1 } });
    expect(errorMessage(null, -32700, "bad")).toEqual({
      jsonrpc: "2.0",
      id: null,
      error: { code: -32700, message: "bad" },
    });
    expect(errorMessage(2, -1, "m", { x: 1 })).toEqual({
      jsonrpc: "2.0",
      id: 2,
      error: { code: -1, message: "m", data: { x: 1 } },
    });
  });
});

describe("guards", () => {
  it("isRecord is true for plain objects only; parseJson never throws", () => {
    expect([{}, [], null, "s", 1].map(isRecord)).toEqual([true, false, false, false, false]);
    expect(parseJson("{")).toBeUndefined();
    expect(parseJson("null")).toBeNull();
  });
});
