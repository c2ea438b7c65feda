// @stores both: the replay reservation is a unique insert in the store.
import { DomainError } from "@gw/core";
import { migrate, openStore, type Store } from "@gw/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requestDigest } from "../src/bundle/format.ts";
import {
  envelope,
  installReferenceVerifier,
  type ReferenceVerifier,
  toolsCall,
} from "../src/testing/index.ts";
import { printer, programDir, verdict } from "../src/testing/programs.ts";
import { type VerifiedActionDeps, verifyMcpCall } from "../src/verify-call.ts";

const sub = "user-1";
const tenantId = `t_${crypto.randomUUID()}`;
const agentId = "agt_0190a7c8-0000-7000-8000-000000000001";
const args = { text: "hi", n: 1, nested: { b: [1, 2], a: "é" } };
const binding = {
  request: { tool: "echo", arguments: args },
  mission: { principal: sub, constraints: { "gateway.tenant_id": tenantId, "gateway.agent_id": agentId } },
};

describe("verifyMcpCall", () => {
  let store: Store;
  let ref: ReferenceVerifier;
  let deps: VerifiedActionDeps;
  beforeAll(async () => {
    store = await openStore(process.env.DATABASE_URL || undefined);
    await migrate(store);
    ref = await installReferenceVerifier();
    deps = { binary: ref.binary, query: store.query };
  });
  afterAll(() => store?.close());

  const call = (text: string, who: Partial<{ sub: string; tenantId: string; agentId: string }> = {}) =>
    verifyMcpCall({ body: Buffer.from(text), sub, tenantId, agentId, ...who }, deps);
  const refusal = async (p: Promise<unknown>) => {
    try {
      await p;
    } catch (e) {
      if (e instanceof DomainError) return [e.kind, e.message];
      throw e;
    }
    return ["accepted"];
  };

  it("verifies, compares and answers the exact inner call bytes with the digest to reserve", async () => {
    const bundle = ref.mint(binding);
    const inner = JSON.stringify(toolsCall("echo", args, "req-1"));
    const body = `{"schema":"gw.gateway.verifier-mcp-call.v1","call":${inner},"authorization":${JSON.stringify(bundle)}}`;
    const result = await call(body);
    expect(result?.forward.toString("utf8")).toBe(inner);
    expect(result?.message).toMatchObject({ method: "tools/call", tool: "echo", id: "req-1" });
    expect(result?.digest).toBe(requestDigest(bundle));
    expect(result?.reservation).toEqual({
      kind: "verified_digest",
      scope: tenantId,
      key: requestDigest(bundle),
    });
  });

  it.each([
    ["members reordered", '{"nested":{"a":"é","b":[1,2]},"n":1,"text":"hi"}'],
    ["a number spelt 1.0", '{"text":"hi","n":1.0,"nested":{"b":[1,2],"a":"é"}}'],
    ["numbers spelt with exponents", '{"text":"hi","n":1e0,"nested":{"b":[10e-1,0.2e1],"a":"é"}}'],
    [
      "escapes and whitespace",
      '{ "t\\u0065xt" : "\\u0068i" ,\n "n" : 100E-2 , "nested" : { "a" : "\\u00e9" , "b" : [ 1 , 2 ] } }',
    ],
  ])("accepts arguments canonically equal to the verified ones: %s", async (_name, spelled) => {
    const inner = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":${spelled}}}`;
    const body = `{"schema":"gw.gateway.verifier-mcp-call.v1","call":${inner},"authorization":${JSON.stringify(ref.mint(binding))}}`;
    expect((await call(body))?.forward.toString("utf8")).toBe(inner);
  });

  it("refuses a bare tools/call with 403 and leaves other methods alone", async () => {
    expect(await refusal(call(JSON.stringify(toolsCall("echo", args))))).toEqual([
      "forbidden",
      "verified authorization required",
    ]);
    expect(await call('{"jsonrpc":"2.0","id":1,"method":"tools/list"}')).toBeNull();
    expect(await call('{"jsonrpc":"2.0","method":"notifications/initialized"}')).toBeNull();
  });

  const mismatches: Array<
    [string, () => string, Partial<{ sub: string; tenantId: string; agentId: string }>]
  > = [
    ["the tool", () => envelope(toolsCall("delete", args), ref.mint(binding)), {}],
    ["an argument value", () => envelope(toolsCall("echo", { ...args, n: 2 }), ref.mint(binding)), {}],
    ["an extra argument", () => envelope(toolsCall("echo", { ...args, x: null }), ref.mint(binding)), {}],
    ["a missing argument", () => envelope(toolsCall("echo", { text: "hi", n: 1 }), ref.mint(binding)), {}],
    [
      "an array order",
      () => envelope(toolsCall("echo", { ...args, nested: { b: [2, 1], a: "é" } }), ref.mint(binding)),
      {},
    ],
    ["a number as string", () => envelope(toolsCall("echo", { ...args, n: "1" }), ref.mint(binding)), {}],
    ["the principal", () => envelope(toolsCall("echo", args), ref.mint(binding)), { sub: "user-2" }],
    ["the tenant", () => envelope(toolsCall("echo", args), ref.mint(binding)), { tenantId: "t_other" }],
    ["the agent", () => envelope(toolsCall("echo", args), ref.mint(binding)), { agentId: "agt_other" }],
    [
      "a tenant constraint that is not a string",
      () =>
        envelope(
          toolsCall("echo", args),
          ref.mint({
            ...binding,
            mission: {
              principal: sub,
              constraints: { "gateway.tenant_id": [tenantId], "gateway.agent_id": agentId },
            },
          }),
        ),
      {},
    ],
    [
      "a missing agent constraint",
      () =>
        envelope(
          toolsCall("echo", args),
          ref.mint({
            ...binding,
            mission: { principal: sub, constraints: { "gateway.tenant_id": tenantId } },
          }),
        ),
      {},
    ],
  ];

  it.each(mismatches)("refuses a mismatch of %s with 403", async (_name, body, who) => {
    expect(await refusal(call(body(), who))).toEqual([
      "forbidden",
      "call does not match the verified authorization",
    ]);
  });

  it("refuses a bad signature, a crashing and a lying verifier with 403", async () => {
    const bundle = ref.mint(binding);
    const forged = { ...bundle, request: { tool: "echo", arguments: { ...args, n: 2 } } };
    expect(await refusal(call(envelope(toolsCall("echo", { ...args, n: 2 }), forged)))).toEqual([
      "forbidden",
      "authorization not verified",
    ]);
    const dir = programDir();
    const lying = printer(dir, "lying", JSON.stringify(verdict()), 3);
    const reasons: string[] = [];
    const lyingDeps = { ...deps, binary: lying, onRefused: (why: string) => reasons.push(why) };
    const p = verifyMcpCall(
      { body: Buffer.from(envelope(toolsCall("echo", args), bundle)), sub, tenantId, agentId },
      lyingDeps,
    );
    expect(await refusal(p)).toEqual(["forbidden", "authorization not verified"]);
    expect(reasons).toEqual(["exit_status"]);
  });

  it("answers 409 when the digest is already reserved in the tenant, and only in that tenant", async () => {
    const bundle = ref.mint(binding);
    const body = envelope(toolsCall("echo", args), bundle);
    expect(await call(body)).not.toBeNull(); // the preflight reserves nothing
    expect(await call(body)).not.toBeNull();
    await store.query(
      "insert into reservations (kind, scope, key, invocation_id) values ($1, $2, $3, 'inv_test')",
      ["verified_digest", tenantId, requestDigest(bundle)],
    );
    expect(await refusal(call(body))).toEqual(["conflict", "authorization already used"]);
    // The same digest reserved by another tenant does not stop this one.
    const fresh = ref.mint(binding);
    await store.query(
      "insert into reservations (kind, scope, key, invocation_id) values ($1, $2, $3, 'inv_test')",
      ["verified_digest", `t_${crypto.randomUUID()}`, requestDigest(fresh)],
    );
    expect(await call(envelope(toolsCall("echo", args), fresh))).not.toBeNull();
  });
});
