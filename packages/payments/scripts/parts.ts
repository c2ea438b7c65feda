// `pnpm exec tsx packages/payments/scripts/parts.ts [n]`: the in-process cost of each part of a paid
// MCP tool call's verification (docs/performance.md, x402), in CPU µs per call, median of 7 rounds. Steadier
// than the bench row on a shared machine: no sockets, no store. What it cannot see (the replay guard's
// durable record before the dial) is the bench row's difference less these parts.
import { newPayer } from "@gw/fixtures";
import { x402Client } from "@x402/core/client";
import type { PaymentPayload, PaymentRequired } from "@x402/core/types";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import secp256k1 from "secp256k1";
import {
  admitToolPayment,
  checkPayment,
  decodePaymentObject,
  keccakReady,
  NETWORKS,
  signerOf,
  toolPaymentRequired,
  toolPriceTable,
  toolRequirements,
  transferDigest,
} from "../src/index.ts";

const n = Number(process.argv[2] ?? "2000");
await keccakReady;
const PAY_TO = "0x5555555555555555555555555555555555555555";
const agent = {
  toolPrices: [{ tool: "search", amount: "1000", network: "base-sepolia", pay_to: PAY_TO }],
  price: null,
};
const table = toolPriceTable(agent as Parameters<typeof toolPriceTable>[0]);
if (!table) throw new Error("no table");
const terms = table.match("search");
if (!terms) throw new Error("no terms");
const req = toolRequirements(terms, "search");
const net = NETWORKS["base-sepolia"];
const payer = registerExactEvmScheme(new x402Client(), { signer: newPayer() });
const required = toolPaymentRequired(req, "payment_required") as unknown as PaymentRequired;
const payments: PaymentPayload[] = [];
for (let i = 0; i < n; i++) payments.push(await payer.createPaymentPayload(required));
// The clock pinned at signing: on a loaded machine the rounds outlast the authorizations' 60 s.
const now = Math.floor(Date.now() / 1000);
type Item = {
  payment: PaymentPayload;
  body: Buffer;
  decoded: NonNullable<ReturnType<typeof decodePaymentObject>>;
  digest: Uint8Array;
  sig: Buffer;
};
const items: Item[] = payments.map((payment, i) => {
  const decoded = decodePaymentObject(payment);
  if (!decoded) throw new Error("payment does not decode");
  const meta = { "x402/payment": payment };
  const call = { name: "search", arguments: { q: "bench" }, _meta: meta };
  return {
    payment,
    body: Buffer.from(JSON.stringify({ jsonrpc: "2.0", id: i, method: "tools/call", params: call })),
    decoded,
    digest: transferDigest(net, decoded.evm.authorization),
    sig: Buffer.from(decoded.evm.signature.slice(2), "hex"),
  };
});

/** The body as forwarded: the payment taken out (services/proxy/src/steps/payment.ts). */
function withoutPayment(body: Buffer): Buffer {
  const msg = JSON.parse(body.toString("utf8")) as { params: { _meta: Record<string, unknown> } };
  delete msg.params._meta["x402/payment"];
  if (Object.keys(msg.params._meta).length === 0) delete (msg.params as { _meta?: unknown })._meta;
  return Buffer.from(JSON.stringify(msg));
}

/** CPU time (user + system), not wall time: on a shared machine the wait for a core is not the part's. */
async function time(name: string, f: (x: Item, i: number) => unknown): Promise<void> {
  const rounds: number[] = [];
  for (let r = 0; r < 7; r++) {
    const t0 = process.cpuUsage();
    for (let i = 0; i < n; i++) await f(items[i] as Item, i);
    const used = process.cpuUsage(t0);
    rounds.push((used.user + used.system) / n);
  }
  rounds.sort((a, b) => a - b);
  console.log(`${name.padEnd(44)} ${(rounds[3] as number).toFixed(1).padStart(8)} µs`);
}

await time("decode (schemas of the payment object)", (x) => decodePaymentObject(x.payment));
await time("requirements of the call", () => toolRequirements(terms, "search"));
await time("digest (struct hash + final hash)", (x) => transferDigest(net, x.decoded.evm.authorization));
await time("recovery (libsecp256k1 alone)", (x) =>
  secp256k1.ecdsaRecover(x.sig.subarray(0, 64), (x.sig[64] as number) - 27, x.digest, false),
);
await time("signer (digest + recovery + address hash)", (x) => signerOf(net, x.decoded.evm));
await time("checkPayment (validation + signer)", (x) =>
  checkPayment({ decoded: x.decoded, price: terms.price, requirements: req, now }),
);
await time("admitToolPayment (all of step 7's package)", (x, i) =>
  admitToolPayment({
    table,
    tool: "search",
    requestId: i,
    payment: x.payment,
    tenantSettles: false,
    settleThenForward: false,
    now,
  }),
);
await time("body without the payment (parse + stringify)", (x) => withoutPayment(x.body));
