import * as v from "valibot";
import { describe, expect, it } from "vitest";
import { ForwardedSchema } from "../src/forwarded.ts";
import { readStoredCall, STORED_CALL_VERSION, storedCallOf } from "../src/stored.ts";

/** A forwarded call, through its schema (the fields a later build adds get their defaults). */
const call = v.parse(ForwardedSchema, {
  invocationId: "inv_1",
  tenantId: "ten_1",
  agentId: "agt_1",
  method: "POST",
  upstreamUrl: "http://127.0.0.1:9/echo",
  virtual: null,
  credentialRef: null,
  protocol: "mcp",
  rpcMethod: "tools/list",
  rpcId: 7,
  captureBodies: false,
  emitReceipts: null,
  headers: ["content-type", "application/json"],
  clientAddress: "127.0.0.1",
  payment: null,
});

/** A stored request as version 2 wrote it: the JSON-RPC method and id under MCP's names. */
const { rpcMethod, rpcId, ...unrenamed } = call;
const v2 = { version: 2, ...unrenamed, mcpMethod: rpcMethod, mcpRequestId: rpcId };

/** A stored request as builds before the versioned shape wrote it (no `version`, no `method`). */
const { version: _version, method: _method, virtual: _virtual, payment: _payment, ...v1 } = v2;

const throughJsonb = (x: unknown) => JSON.parse(JSON.stringify(x));

describe("a stored request is checked when a worker claims it", () => {
  it("a forwarded call stored by this build (through jsonb) reads back as it was", () => {
    const stored = storedCallOf(call, undefined);
    expect(stored.version).toBe(STORED_CALL_VERSION);
    expect(readStoredCall(throughJsonb(stored))).toEqual(stored);
  });

  it("keeps a sealed caller token beside the call", () => {
    const subjectToken = { ciphertext: "c", wrappedKey: "w", kekId: "k" };
    expect(readStoredCall(throughJsonb(storedCallOf(call, subjectToken)))?.subjectToken).toEqual(
      subjectToken,
    );
  });

  it("a call stored in the second shape (version 2, MCP's field names) reads as the same call", () => {
    expect(readStoredCall(throughJsonb(v2))).toEqual({ ...call, version: STORED_CALL_VERSION });
    const a2a = { ...v2, protocol: "a2a", mcpMethod: "SendMessage", mcpRequestId: "r-1" };
    const read = readStoredCall(throughJsonb(a2a));
    expect(read?.rpcMethod).toBe("SendMessage");
    expect(read?.rpcId).toBe("r-1");
    expect(read).not.toHaveProperty("mcpMethod");
    expect(read).not.toHaveProperty("mcpRequestId");
  });

  it("a version-2 call missing its method is no call", () => {
    const { mcpMethod: _m, ...broken } = v2;
    expect(readStoredCall(broken)).toBeNull();
  });

  it("a call stored in the first, unversioned shape reads as the same call (POST)", () => {
    expect(readStoredCall(throughJsonb(v1))).toEqual({ ...call, version: STORED_CALL_VERSION });
  });

  it("a first-shape call stored before mcpRequestId, emitReceipts and payment existed still reads", () => {
    const { mcpRequestId: _, emitReceipts: __, ...older } = v1;
    const read = readStoredCall(older);
    expect(read?.rpcId).toBeNull();
    expect(read?.emitReceipts).toBeNull();
    expect(read?.payment).toBeNull();
    expect(read?.virtual).toBeNull();
  });

  it.each([
    ["not an object", "job"],
    ["an unknown protocol", { ...v1, protocol: "ftp" }],
    ["headers that are not a list", { ...v1, headers: "content-type: text/plain" }],
    ["no upstream", { ...v1, upstreamUrl: undefined }],
    ["an upstream that is not a URL", { ...v1, upstreamUrl: "nowhere" }],
    ["a payment without its facts", { ...v1, payment: { version: 2 } }],
    ["a versioned call with an unknown method", { ...storedCallOf(call, undefined), method: "PUT" }],
    ["a versioned call missing a field", { ...storedCallOf(call, undefined), protocol: undefined }],
    ["a shape of a later build", { ...storedCallOf(call, undefined), version: STORED_CALL_VERSION + 1 }],
  ])("%s is no call: null, never a guess", (_, job) => {
    expect(readStoredCall(job)).toBeNull();
  });
});
