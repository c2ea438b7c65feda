import { DomainError } from "@gw/core";
import { describe, expect, it } from "vitest";
import { readVerifiedActionBody } from "../src/envelope.ts";
import { BUNDLE_SCHEMA, ENVELOPE_SCHEMA } from "../src/schemas.ts";

const call =
  '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}';
const auth = `{"schema":"${BUNDLE_SCHEMA}","anything":{"the":"verifier judges"}}`;
const body = (s: string) => Buffer.from(s, "utf8");

function refusal(text: string | Buffer): { kind: string; message: string } {
  try {
    readVerifiedActionBody(typeof text === "string" ? body(text) : text);
  } catch (e) {
    if (e instanceof DomainError) return { kind: e.kind, message: e.message };
    throw e;
  }
  throw new Error("accepted");
}

describe("readVerifiedActionBody", () => {
  it("keeps the exact bytes of call and authorization", () => {
    const text = `{ "authorization" :${auth} ,"schema":"${ENVELOPE_SCHEMA}",\n"call":  ${call}\n}`;
    const read = readVerifiedActionBody(body(text));
    if (read.kind !== "envelope") throw new Error("not an envelope");
    expect(read.call.toString("utf8")).toBe(call);
    expect(read.authorization.toString("utf8")).toBe(auth);
    expect(read.tool).toBe("echo");
    expect(read.arguments).toEqual({ text: "hi" });
    expect(read.message).toMatchObject({ kind: "request", method: "tools/call", tool: "echo", id: 7 });
  });

  it("treats absent arguments as an empty object", () => {
    const bare = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ping"}}';
    const read = readVerifiedActionBody(
      body(`{"schema":"${ENVELOPE_SCHEMA}","call":${bare},"authorization":${auth}}`),
    );
    expect(read.kind === "envelope" && read.arguments).toEqual({});
  });

  it("returns a plain JSON-RPC message as such (the caller refuses a bare tools/call)", () => {
    expect(readVerifiedActionBody(body(call))).toMatchObject({
      kind: "jsonrpc",
      message: { method: "tools/call" },
    });
    const list = '{"jsonrpc":"2.0","id":1,"method":"tools/list"}';
    expect(readVerifiedActionBody(body(list))).toMatchObject({
      kind: "jsonrpc",
      message: { method: "tools/list" },
    });
  });

  const ok = { schema: `"${ENVELOPE_SCHEMA}"`, call, authorization: auth };
  const env = (o: Record<string, string>) =>
    `{${Object.entries(o)
      .map(([k, v]) => `"${k}":${v}`)
      .join(",")}}`;

  const malformed: Array<[string, string]> = [
    ["a missing authorization", env({ schema: ok.schema, call })],
    ["a missing call", env({ schema: ok.schema, authorization: auth })],
    ["a missing schema", env({ call, authorization: auth })],
    ["an extra key", env({ ...ok, extra: "1" })],
    ["a wrongly named key", env({ schema: ok.schema, call, authorisation: auth })],
    [
      "a duplicate top-level key",
      `{"schema":${ok.schema},"call":${call},"authorization":${auth},"call":${call}}`,
    ],
    [
      "a duplicate key in the call",
      env({ ...ok, call: call.replace('"text":"hi"', '"text":"hi","text":"rm -rf"') }),
    ],
    [
      "a duplicate key in the authorization",
      env({ ...ok, authorization: auth.replace('"the"', '"the":1,"the"') }),
    ],
    [
      "a duplicate method in the call",
      env({ ...ok, call: call.replace('"method"', '"method":"tools/list","method"') }),
    ],
    ["the wrong envelope schema", env({ ...ok, schema: '"gw.gateway.verifier-mcp-call.v2"' })],
    ["a non-string envelope schema", env({ ...ok, schema: "1" })],
    [
      "the wrong bundle schema",
      env({ ...ok, authorization: auth.replace(BUNDLE_SCHEMA, "gw.verifier.authorization-bundle.v0") }),
    ],
    ["a bundle without schema", env({ ...ok, authorization: '{"a":1}' })],
    ["a bundle that is a string", env({ ...ok, authorization: `"${BUNDLE_SCHEMA}"` })],
    ["a call that is not tools/call", env({ ...ok, call: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}' })],
    ["a call that is a batch", env({ ...ok, call: `[${call}]` })],
    ["a call that is a notification", env({ ...ok, call: call.replace('"id":7,', "") })],
    ["a call without jsonrpc 2.0", env({ ...ok, call: call.replace('"2.0"', '"1.0"') })],
    ["a call without a tool name", env({ ...ok, call: call.replace('"name":"echo",', "") })],
    ["a call whose arguments are an array", env({ ...ok, call: call.replace('{"text":"hi"}', "[1]") })],
    ["a call that is a string", env({ ...ok, call: JSON.stringify(call) })],
    ["invalid JSON", `{"schema":${ok.schema},`],
    ["a top-level array", `[${env(ok)}]`],
  ];

  it.each(malformed)("answers 400 for %s", (_name, text) => {
    expect(refusal(text).kind).toBe("invalid");
  });

  it("answers 400 for a duplicate key in a bare JSON-RPC body (no smuggled second method)", () => {
    expect(refusal('{"jsonrpc":"2.0","id":1,"method":"tools/call","method":"tools/list"}').kind).toBe(
      "invalid",
    );
  });

  it("answers 413 for an authorization over 1 MiB, and accepts one of exactly 1 MiB", () => {
    const pad = (n: number) => `{"schema":"${BUNDLE_SCHEMA}","pad":"${"x".repeat(n)}"}`;
    const exact = pad(1024 * 1024 - pad(0).length);
    expect(Buffer.byteLength(exact)).toBe(1024 * 1024);
    expect(readVerifiedActionBody(body(env({ ...ok, authorization: exact }))).kind).toBe("envelope");
    const over = pad(1024 * 1024 - pad(0).length + 1);
    expect(refusal(env({ ...ok, authorization: over }))).toEqual({
      kind: "too_large",
      message: "the authorization bundle is larger than 1 MiB",
    });
  });

  it("never echoes the body in an error message", () => {
    const secret = "s3cr3t-value";
    const { message } = refusal(env({ ...ok, extra: `"${secret}"` }));
    expect(message).not.toContain(secret);
  });
});
