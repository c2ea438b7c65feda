// @stores both: settlements are rows whose status moves in the store.
import {
  type Facilitator,
  newPayer,
  type Res,
  signPayment,
  startFacilitator,
  type TestApp,
  type Upstream,
} from "@gw/testkit";
import { x402Client } from "@x402/core/client";
import { decodePaymentRequiredHeader, decodePaymentResponseHeader } from "@x402/core/http";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type Caller,
  caller,
  createAgent,
  pollDone,
  recordDone,
  startGateway,
  upstreamPool,
} from "./helpers.ts";

type LocalAccount = ReturnType<typeof newPayer>;

const PUBLIC_URL = "https://gateway.example";
const PAY_TO = "0x5555555555555555555555555555555555555555";
const PRICE = { amount: "1000", asset: "USDC", network: "base-sepolia", pay_to: PAY_TO } as const;
const ANSWER = JSON.stringify({ answer: "paid content", n: 42 });

let gw: TestApp;
let fac: Facilitator;
const pool = upstreamPool();
/** Every payer key this suite made: the sweep checks none reached a response or a log line. */
const payers: Array<{ testKey: string }> = [];
const responses: Res[] = [];

function payer(): LocalAccount {
  const p = newPayer();
  payers.push(p);
  return p;
}

beforeAll(async () => {
  fac = await startFacilitator();
  gw = await startGateway({ GW_PUBLIC_URL: PUBLIC_URL, GW_SETTLE_TIMEOUT_MS: "500", GW_LOG_LEVEL: "trace" });
});
afterAll(async () => {
  await gw?.close();
  await fac?.close();
  await pool.closeAll();
});

async function answering(status = 200): Promise<Upstream> {
  return pool.up((_req, res) => {
    res.writeHead(status, { "content-type": "application/json" });
    res.end(ANSWER);
  });
}

/** A tenant with a priced agent in front of a fresh upstream, settling through `facilitator` (or not). */
async function setup(
  opts: { settle?: Facilitator | null; status?: number; price?: object; agent?: object } = {},
) {
  const call = await caller(gw);
  const logged: Caller = Object.assign(
    async (...args: Parameters<Caller>) => {
      const res = await call(...args);
      responses.push(res);
      return res;
    },
    { tenant: call.tenant, token: call.token },
  );
  const upstream = await answering(opts.status);
  const agentId = await createAgent(logged, {
    name: "Priced agent",
    upstream_url: upstream.url,
    price: opts.price ?? PRICE,
    ...opts.agent,
  });
  const settle = opts.settle === undefined ? fac : opts.settle;
  if (settle) {
    const res = await logged("PUT", "/v1/settlement/config", { facilitator_url: settle.url });
    expect(res.status).toBe(200);
  }
  return { call: logged, upstream, agentId };
}

const total = async (call: Caller) => (await call("GET", "/v1/invocations")).json.total as number;

/** @x402/fetch over the real fetch, carrying the tenant's bearer; `v1Only` hides the v2 header. */
function officialFetch(call: Caller, account: LocalAccount, opts: { v1Only?: boolean } = {}) {
  const base: typeof fetch = async (input, init) => {
    const res = await fetch(input, init);
    if (!opts.v1Only || res.status !== 402) return res;
    const headers = new Headers(res.headers);
    headers.delete("payment-required");
    return new Response(await res.arrayBuffer(), { status: res.status, headers });
  };
  const pay = wrapFetchWithPayment(base, registerExactEvmScheme(new x402Client(), { signer: account }));
  return (path: string, body: string) =>
    pay(`${gw.url}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${call.token}`, "content-type": "application/json" },
      body,
    });
}

describe("challenge", () => {
  for (const suffix of ["", "/stream"]) {
    it(`402 with the v1 body and the v2 header, nothing created (${suffix || "transactional"})`, async () => {
      const { call, upstream, agentId } = await setup();
      const path = `/v1/proxy/${agentId}${suffix}`;
      const res = await call("POST", path, { q: 1 });
      expect(res.status).toBe(402);
      expect(res.json).toEqual({
        x402Version: 1,
        error: "X-PAYMENT header is required",
        accepts: [
          {
            scheme: "exact",
            network: "base-sepolia",
            maxAmountRequired: "1000",
            resource: `${PUBLIC_URL}${path}`,
            description: "Priced agent",
            mimeType: "application/json",
            payTo: PAY_TO,
            maxTimeoutSeconds: 60,
            asset: "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
            extra: { name: "USDC", version: "2" },
          },
        ],
      });
      const v2 = decodePaymentRequiredHeader(res.headers.get("payment-required") ?? "");
      expect(v2).toMatchObject({
        x402Version: 2,
        resource: { url: `${PUBLIC_URL}${path}`, description: "Priced agent", mimeType: "application/json" },
        accepts: [{ scheme: "exact", network: "eip155:84532", amount: "1000", payTo: PAY_TO }],
      });
      expect(await total(call)).toBe(0);
      expect(upstream.received).toHaveLength(0);
    });
  }
});

describe("the official @x402/fetch + @x402/evm client pays unchanged", () => {
  it("v2 header, streaming: the upstream's answer, PAYMENT-RESPONSE, recorded payment and settlement", async () => {
    const { call, upstream, agentId } = await setup();
    const account = payer();
    const res = await officialFetch(call, account)(`/v1/proxy/${agentId}/stream`, '{"hello":"v2"}');
    expect(res.status).toBe(200);
    expect(await res.text()).toBe(ANSWER);
    const receipt = decodePaymentResponseHeader(res.headers.get("payment-response") ?? "");
    expect(receipt).toEqual({
      success: true,
      transaction: fac.transactions.at(-1),
      network: "eip155:84532",
      payer: account.address.toLowerCase(),
    });
    expect(res.headers.get("x-payment-response")).toBeNull();
    expect(upstream.received).toHaveLength(1);
    expect(upstream.received[0]?.body.toString()).toBe('{"hello":"v2"}');
    expect(upstream.received[0]?.headers["payment-signature"]).toBeUndefined();
    expect(upstream.received[0]?.headers["x-payment"]).toBeUndefined();
    const inv = await recordDone(call, res.headers.get("x-gateway-invocation-id") ?? "");
    expect(inv.json).toMatchObject({
      status: "succeeded",
      payment_network: "base-sepolia",
      payment_asset: "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
      payment_amount: "1000",
      payment_payer: account.address.toLowerCase(),
      payment_nonce: expect.stringMatching(/^0x[0-9a-f]{64}$/),
      settlement: {
        status: "settled",
        tx_hash: fac.transactions.at(-1),
        settled_amount: "1000",
        operator_amount: "1000",
        attempts: 1,
        settled_at: expect.any(String),
      },
    });
  });

  it("v1 body (no v2 header seen), streaming: X-PAYMENT-RESPONSE", async () => {
    const { call, upstream, agentId } = await setup();
    const account = payer();
    const res = await officialFetch(call, account, { v1Only: true })(`/v1/proxy/${agentId}/stream`, "{}");
    expect(res.status).toBe(200);
    expect(await res.text()).toBe(ANSWER);
    expect(decodePaymentResponseHeader(res.headers.get("x-payment-response") ?? "")).toMatchObject({
      success: true,
      network: "base-sepolia",
    });
    expect(upstream.received).toHaveLength(1);
    expect(JSON.parse(fac.received.at(-1)?.body.toString() ?? "{}").x402Version).toBe(1);
  });

  for (const v1Only of [false, true]) {
    it(`transactional (${v1Only ? "v1 body" : "v2 header"}): 202, the worker settles then forwards`, async () => {
      const { call, upstream, agentId } = await setup();
      const res = await officialFetch(call, payer(), { v1Only })(`/v1/proxy/${agentId}`, '{"t":1}');
      expect(res.status).toBe(202);
      const { invocation_id } = (await res.json()) as { invocation_id: string };
      const done = await pollDone(call, agentId, invocation_id);
      expect(done.json).toMatchObject({
        status: "succeeded",
        settlement: { status: "settled", attempts: 1 },
      });
      expect(Buffer.from(done.json.response.body_b64, "base64").toString()).toBe(ANSWER);
      expect(upstream.received).toHaveLength(1);
      expect(upstream.received[0]?.headers["x-payment"]).toBeUndefined();
      expect(upstream.received[0]?.headers["payment-signature"]).toBeUndefined();
    });
  }
});

describe("refused payments: 402, coarse error, no invocation, upstream untouched", () => {
  const now = BigInt(Math.floor(Date.now() / 1000));
  const terms = () => ({ payer: payer(), network: "base-sepolia" as const, payTo: PAY_TO, value: "1000" });
  const cases: Array<[string, () => Promise<{ name: string; value: string }>]> = [
    [
      "forged signature",
      async () => {
        const h = await signPayment(1, terms());
        const p = JSON.parse(Buffer.from(h.value, "base64").toString());
        p.payload.signature = `0x${"1b".repeat(65)}`;
        return { name: h.name, value: Buffer.from(JSON.stringify(p)).toString("base64") };
      },
    ],
    ["another signer", () => signPayment(1, { ...terms(), from: newPayer().address })],
    ["wrong chain", () => signPayment(2, { ...terms(), domain: { chainId: 8453 } })],
    [
      "wrong contract",
      () =>
        signPayment(1, {
          ...terms(),
          domain: { verifyingContract: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913" },
        }),
    ],
    ["wrong EIP-712 name", () => signPayment(2, { ...terms(), domain: { name: "USD Coin" } })],
    [
      "wrong payTo",
      () => signPayment(1, { ...terms(), payTo: "0x6666666666666666666666666666666666666666" }),
    ],
    ["value one below the price", () => signPayment(1, { ...terms(), value: "999" })],
    ["expired", () => signPayment(1, { ...terms(), validBefore: now - 5n })],
    ["not yet valid", () => signPayment(2, { ...terms(), validAfter: now + 120n })],
    ["wrong network", () => signPayment(1, { ...terms(), claimedNetwork: "base" })],
    ["wrong scheme", () => signPayment(2, { ...terms(), scheme: "upto" })],
  ];
  const malformed: Array<[string, Record<string, string>]> = [
    ["not base64", { "x-payment": "***" }],
    ["bad padding", { "x-payment": "abcde" }],
    ["invalid UTF-8", { "x-payment": Buffer.from([0xc3, 0x28]).toString("base64") }],
    ["bad JSON", { "x-payment": Buffer.from("{").toString("base64") }],
    ["JSON null", { "x-payment": Buffer.from("null").toString("base64") }],
    ["array", { "payment-signature": Buffer.from("[]").toString("base64") }],
    ["v2 body in the v1 header", { "x-payment": Buffer.from('{"x402Version":2}').toString("base64") }],
    [
      "missing authorization",
      {
        "x-payment": Buffer.from(
          '{"x402Version":1,"scheme":"exact","network":"base-sepolia","payload":{}}',
        ).toString("base64"),
      },
    ],
    [
      "numbers where strings go",
      {
        "x-payment": Buffer.from(
          JSON.stringify({
            x402Version: 1,
            scheme: "exact",
            network: "base-sepolia",
            payload: {
              signature: 1,
              authorization: { from: 1, to: 2, value: 3, validAfter: 4, validBefore: 5, nonce: 6 },
            },
          }),
        ).toString("base64"),
      },
    ],
    [
      "value past 256 bits",
      {
        "x-payment": Buffer.from(
          JSON.stringify({
            x402Version: 1,
            scheme: "exact",
            network: "base-sepolia",
            payload: {
              signature: `0x${"1".repeat(130)}`,
              authorization: {
                from: PAY_TO,
                to: PAY_TO,
                value: "1".repeat(200),
                validAfter: "0",
                validBefore: "9",
                nonce: `0x${"0".repeat(64)}`,
              },
            },
          }),
        ).toString("base64"),
      },
    ],
    ["huge header", { "x-payment": "A".repeat(12_000) }],
  ];
  for (const suffix of ["", "/stream"]) {
    for (const [name, make] of cases) {
      it(`${name} (${suffix || "transactional"})`, async () => {
        const { call, upstream, agentId } = await setup();
        const h = await make();
        const res = await call("POST", `/v1/proxy/${agentId}${suffix}`, "{}", {
          "content-type": "application/json",
          [h.name]: h.value,
        });
        expect(res.status).toBe(402);
        expect(res.json).toEqual({ error: "payment verification failed" });
        expect(await total(call)).toBe(0);
        expect(upstream.received).toHaveLength(0);
      });
    }
    it(`eleven malformed headers (${suffix || "transactional"})`, async () => {
      const { call, upstream, agentId } = await setup();
      for (const [name, headers] of malformed) {
        const res = await call("POST", `/v1/proxy/${agentId}${suffix}`, "{}", {
          "content-type": "application/json",
          ...headers,
        });
        expect([name, res.status, res.json]).toEqual([name, 402, { error: "payment verification failed" }]);
      }
      expect(await total(call)).toBe(0);
      expect(upstream.received).toHaveLength(0);
    });
  }
});

describe("every field of both payment generations, malformed after signing: 402, never a 5xx", () => {
  // Values no verified field accepts: wrong JSON types, non-decimal and hex numbers, negatives,
  // numbers past 256 bits, exponents, edge spaces, non-ASCII digits.
  const BAD: unknown[] = [
    "1.5",
    "1e3",
    "abc",
    "0x10",
    "-1",
    "",
    " 1000",
    "\uff11\uff10",
    "1".repeat(100),
    3.5,
    -1,
    1e308,
    null,
    [],
    {},
    true,
  ];
  const FIELDS: Record<1 | 2, string[][]> = {
    1: [
      ["x402Version"],
      ["scheme"],
      ["network"],
      ["payload"],
      ["payload", "signature"],
      ["payload", "authorization"],
    ],
    2: [
      ["x402Version"],
      ["accepted"],
      ["payload"],
      ["payload", "signature"],
      ["payload", "authorization"],
    ].concat(["scheme", "network", "amount", "asset", "payTo"].map((k) => ["accepted", k])),
  };
  for (const k of ["from", "to", "value", "validAfter", "validBefore", "nonce"]) {
    FIELDS[1].push(["payload", "authorization", k]);
    FIELDS[2].push(["payload", "authorization", k]);
  }
  const set = (o: Record<string, unknown>, path: string[], value: unknown) => {
    const copy = structuredClone(o);
    let at = copy;
    for (const k of path.slice(0, -1)) at = at[k] as Record<string, unknown>;
    at[path.at(-1) as string] = value;
    return copy;
  };
  for (const version of [1, 2] as const) {
    for (const suffix of ["", "/stream"]) {
      it(`v${version} (${suffix || "transactional"})`, async () => {
        // Hundreds of calls in a row: the rate limit must not answer first.
        const { call, upstream, agentId } = await setup({
          agent: { rate_limit: { rps: 100_000, burst: 100_000 } },
        });
        const signed = await signPayment(version, {
          payer: payer(),
          network: "base-sepolia",
          payTo: PAY_TO,
          value: "1000",
        });
        const wrong: unknown[] = [];
        for (const path of FIELDS[version]) {
          for (const value of BAD) {
            const body = Buffer.from(
              JSON.stringify(set(signed.payload as Record<string, unknown>, path, value)),
            );
            const res = await call("POST", `/v1/proxy/${agentId}${suffix}`, "{}", {
              "content-type": "application/json",
              [signed.name]: body.toString("base64"),
            });
            if (res.status !== 402 || res.json?.error !== "payment verification failed") {
              wrong.push([path.join("."), value, res.status, res.text]);
            }
          }
        }
        expect(wrong).toEqual([]);
        expect(await total(call)).toBe(0);
        expect(upstream.received).toHaveLength(0);
      });
    }
  }

  // The v2 fields the gateway does not verify (docs/payments.md, "What the gateway checks"): of
  // `accepted` only scheme, network, asset, payTo and amount are compared with the terms; the
  // EIP-712 domain is the gateway's own per network, not `accepted.extra`'s; `resource` and
  // `extensions` are the payer's own. The protocol's schema (@x402/core, applied when the header is
  // decoded) still refuses a value of the wrong type there: 402, nothing forwarded. A value of the
  // type it allows changes nothing: the signature covers only the authorization, so the payment is
  // valid and the call goes through, once. Never a 5xx either way.
  const IGNORED: Array<[path: string[], passes: unknown[]]> = [
    // A positive number.
    [
      ["accepted", "maxTimeoutSeconds"],
      [3.5, 1e308, 1],
    ],
    // An object, or null.
    [
      ["accepted", "extra"],
      [null, {}, { name: "Some Other Token", version: "9" }],
    ],
    // Anything: `extra` is a free-form record.
    [["accepted", "extra", "name"], BAD],
    [["accepted", "extra", "version"], BAD],
    // A resource description with a non-empty url, or null.
    [["resource"], [null, { url: "https://elsewhere.example/x" }]],
    // An object, or null.
    [["extensions"], [null, {}, { someExtension: { info: 1 } }]],
  ];
  for (const suffix of ["", "/stream"]) {
    it(`v2 fields not verified: a wrong type is 402, a value of the right type passes once (${suffix || "transactional"})`, async () => {
      const { call, upstream, agentId } = await setup({
        agent: { rate_limit: { rps: 100_000, burst: 100_000 } },
      });
      const wrong: unknown[] = [];
      const passed: string[] = [];
      // Values compared by their JSON: `{}` written twice is one value.
      const key = (v: unknown) => JSON.stringify(v);
      const distinct = (vs: unknown[]) => [...new Map(vs.map((v) => [key(v), v])).values()];
      for (const [path, passes] of IGNORED) {
        const passing = new Set(passes.map(key));
        for (const value of distinct([...BAD, ...passes])) {
          // A fresh authorization per call: one that passed is spent (the replay guard).
          const signed = await signPayment(2, {
            payer: payer(),
            network: "base-sepolia",
            payTo: PAY_TO,
            value: "1000",
          });
          const body = Buffer.from(
            JSON.stringify(set(signed.payload as Record<string, unknown>, path, value)),
          );
          const res = await call("POST", `/v1/proxy/${agentId}${suffix}`, "{}", {
            "content-type": "application/json",
            [signed.name]: body.toString("base64"),
          });
          const ok = passing.has(key(value))
            ? res.status === (suffix ? 200 : 202)
            : res.status === 402 && res.json?.error === "payment verification failed";
          if (!ok) wrong.push([path.join("."), value, res.status, res.text]);
          const id = res.headers.get("x-gateway-invocation-id") ?? res.json?.invocation_id;
          if (passing.has(key(value)) && id) passed.push(id);
        }
      }
      expect(wrong).toEqual([]);
      const expected = IGNORED.reduce((n, [, passes]) => n + distinct(passes).length, 0);
      expect(passed).toHaveLength(expected);
      for (const id of passed) {
        expect((suffix ? await recordDone(call, id) : await pollDone(call, agentId, id)).json.status).toBe(
          "succeeded",
        );
      }
      // Only the valid payments reached the upstream, each once; nothing else was recorded.
      expect(upstream.received).toHaveLength(expected);
      expect(await total(call)).toBe(expected);
    });
  }
});

describe("replay guard", () => {
  for (const suffix of ["", "/stream"]) {
    it(`a replayed nonce is refused (${suffix || "transactional"})`, async () => {
      const { call, agentId } = await setup({ settle: null });
      const h = await signPayment(1, {
        payer: payer(),
        network: "base-sepolia",
        payTo: PAY_TO,
        value: "1000",
      });
      const headers = { "content-type": "application/json", [h.name]: h.value };
      const first = await call("POST", `/v1/proxy/${agentId}${suffix}`, "{}", headers);
      expect([200, 202]).toContain(first.status);
      const again = await call("POST", `/v1/proxy/${agentId}${suffix}`, "{}", headers);
      expect(again.status).toBe(402);
      expect(again.json).toEqual({ error: "payment verification failed" });
      expect(await total(call)).toBe(1);
    });

    it(`eight concurrent requests with one authorization: exactly one passes (${suffix || "transactional"})`, async () => {
      const { call, upstream, agentId } = await setup({ settle: null });
      const h = await signPayment(2, {
        payer: payer(),
        network: "base-sepolia",
        payTo: PAY_TO,
        value: "1000",
      });
      const results = await Promise.all(
        Array.from({ length: 8 }, () =>
          call("POST", `/v1/proxy/${agentId}${suffix}`, "{}", {
            "content-type": "application/json",
            [h.name]: h.value,
          }),
        ),
      );
      const passed = results.filter((r) => r.status === 200 || r.status === 202);
      expect(passed).toHaveLength(1);
      for (const r of results.filter((x) => x !== passed[0])) {
        expect(r.status).toBe(402);
        expect(r.json).toEqual({ error: "payment verification failed" });
      }
      expect(await total(call)).toBe(1);
      if (suffix) expect(upstream.received).toHaveLength(1);
    });
  }
});

describe("facilitator behaviours: every settlement status, the upstream called exactly when it should be", () => {
  async function paidCall(suffix: string, behaviour: Facilitator["behaviour"], status = 200) {
    const facilitator = await startFacilitator(behaviour);
    facilitator.fee = "25";
    const ctx = await setup({ settle: facilitator, status });
    const h = await signPayment(2, { payer: payer(), network: "base-sepolia", payTo: PAY_TO, value: "1000" });
    const res = await ctx.call("POST", `/v1/proxy/${ctx.agentId}${suffix}`, '{"x":1}', {
      "content-type": "application/json",
      [h.name]: h.value,
    });
    const id = suffix ? res.headers.get("x-gateway-invocation-id") : res.json?.invocation_id;
    const record = id ? await recordDone(ctx.call, id) : undefined;
    await facilitator.close();
    for (const r of [res, record]) {
      expect(r?.text ?? "").not.toContain(facilitator.marker);
    }
    return { ...ctx, res, record, facilitator };
  }

  for (const suffix of ["", "/stream"]) {
    const mode = suffix ? "streaming" : "transactional";
    it(`succeeds with a fee (${mode})`, async () => {
      const { res, record, upstream } = await paidCall(suffix, "fee");
      expect(res.status).toBe(suffix ? 200 : 202);
      expect(record?.json.settlement).toMatchObject({
        status: "settled",
        settled_amount: "1000",
        facilitator_fee: "25",
        operator_amount: "975",
        attempts: 1,
      });
      expect(upstream.received).toHaveLength(1);
    });

    it(`success:false → settlement_failed, upstream never called (${mode})`, async () => {
      const { res, record, upstream, facilitator } = await paidCall(suffix, "reject");
      if (suffix) {
        expect(res.status).toBe(402);
        expect(res.json).toEqual({ error: "settlement failed" });
        expect(res.headers.get("x-gateway-invocation-id")).toMatch(/^inv_/);
      }
      expect(record?.json).toMatchObject({
        status: "failed",
        error_class: null,
        settlement: { status: "settlement_failed", attempts: 1, reason: "payment_rejected" },
      });
      expect(facilitator.hits).toBe(1);
      expect(upstream.received).toHaveLength(0);
    });

    it(`503 once then success → settled after two attempts (${mode})`, async () => {
      const { record, upstream, facilitator } = await paidCall(suffix, "fail-once");
      expect(record?.json.settlement).toMatchObject({ status: "settled", attempts: 2 });
      expect(facilitator.hits).toBe(2);
      expect(upstream.received).toHaveLength(1);
    });

    it(`always 5xx → settlement_failed after three attempts (${mode})`, async () => {
      const { record, upstream, facilitator } = await paidCall(suffix, "fail");
      expect(record?.json.settlement).toEqual({
        status: "settlement_failed",
        attempts: 3,
        reason: "facilitator_error",
      });
      expect(facilitator.hits).toBe(3);
      expect(upstream.received).toHaveLength(0);
    });

    it(`hangs → settlement_failed on the time-out, not re-submitted (${mode})`, async () => {
      const { record, upstream, facilitator } = await paidCall(suffix, "hang");
      expect(record?.json.settlement).toEqual({
        status: "settlement_failed",
        attempts: 1,
        reason: "facilitator_timeout",
      });
      expect(facilitator.hits).toBe(1);
      expect(upstream.received).toHaveLength(0);
    });

    it(`settled, then the upstream fails → settled_upstream_failed (${mode})`, async () => {
      const { record, upstream } = await paidCall(suffix, "succeed", 500);
      expect(record?.json).toMatchObject({
        status: "failed",
        settlement: { status: "settled_upstream_failed" },
      });
      expect(upstream.received.length).toBeGreaterThanOrEqual(1);
    });
  }

  it("the settlement filter lists by status", async () => {
    const { call, record } = await paidCall("/stream", "reject");
    const failed = await call("GET", "/v1/invocations?settlement=settlement_failed");
    expect(failed.json.data.map((i: { id: string }) => i.id)).toEqual([record?.json.id]);
    expect((await call("GET", "/v1/invocations?settlement=settled")).json.total).toBe(0);
    expect((await call("GET", "/v1/invocations?settlement=bogus")).status).toBe(400);
  });
});

describe("deployment without settle-then-forward", () => {
  it("503 for a tenant with a facilitator, nothing created; verified-only for a tenant without", async () => {
    const off = await startGateway({ GW_SETTLE_THEN_FORWARD: "false" });
    try {
      const a = await caller(off);
      const upstream = await answering();
      const agentId = await createAgent(a, { upstream_url: upstream.url, price: PRICE });
      await a("PUT", "/v1/settlement/config", { facilitator_url: fac.url });
      const h = await signPayment(1, {
        payer: payer(),
        network: "base-sepolia",
        payTo: PAY_TO,
        value: "1000",
      });
      for (const suffix of ["", "/stream"]) {
        const res = await a("POST", `/v1/proxy/${agentId}${suffix}`, "{}", { [h.name]: h.value });
        expect(res.status).toBe(503);
        expect(res.json).toEqual({ error: "settlement unavailable" });
      }
      expect((await a("GET", "/v1/invocations")).json.total).toBe(0);
      expect(upstream.received).toHaveLength(0);

      const b = await caller(off);
      const agentB = await createAgent(b, { upstream_url: upstream.url, price: PRICE });
      const res = await b("POST", `/v1/proxy/${agentB}/stream`, "{}", { [h.name]: h.value });
      expect(res.status).toBe(200);
      const inv = await recordDone(b, res.headers.get("x-gateway-invocation-id") ?? "");
      expect(inv.json.settlement).toBeUndefined();
      expect(inv.json.payment_amount).toBe("1000");
    } finally {
      await off.close();
    }
  });
});

describe("no private key anywhere", () => {
  it("no payer key or facilitator text in any response or log line", () => {
    const seen =
      responses.map((r) => `${r.text}${JSON.stringify([...r.headers])}`).join("\n") + gw.logs.text();
    expect(payers.length).toBeGreaterThan(20);
    for (const p of payers) {
      expect(seen).not.toContain(p.testKey.slice(2));
    }
    expect(seen).not.toContain(fac.marker);
  });
});
