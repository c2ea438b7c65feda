import { randomBytes } from "node:crypto";
import type { ServerResponse } from "node:http";
import { startUpstream, type Upstream } from "./upstream.ts";

/**
 * What the local facilitator does with a `POST /settle`:
 * - `succeed`: `{success:true, transaction, network, payer}`;
 * - `fee`: the same plus `fee` (see `fee`);
 * - `reject`: `{success:false, errorReason}` (final: the gateway must not retry);
 * - `fail-once`: 503 on the first settle, then succeed;
 * - `fail`: 503 every time;
 * - `garbage`: 200 with a body that is not JSON;
 * - `hang`: never answers (the gateway's time-out decides).
 */
export type FacilitatorBehaviour = "succeed" | "fee" | "reject" | "fail-once" | "fail" | "garbage" | "hang";

export type Facilitator = Upstream & {
  behaviour: FacilitatorBehaviour;
  /** The fee reported by `fee` (smallest unit, decimal string). */
  fee: string;
  /** `POST /settle` requests received, whatever was answered. */
  readonly hits: number;
  /** Transaction hashes answered, in order. */
  transactions: string[];
  /**
   * A marker the facilitator puts in every answer's free-text fields: tests assert it never
   * reaches a response or a record (no raw facilitator bytes).
   */
  marker: string;
};

/**
 * A local server speaking the x402 facilitator's `POST /settle`. It checks nothing on-chain; it
 * records what it was sent (`received`) so tests can assert the request the gateway made.
 */
export async function startFacilitator(behaviour: FacilitatorBehaviour = "succeed"): Promise<Facilitator> {
  const marker = `FACILITATOR-RAW-${randomBytes(6).toString("hex")}`;
  const state = { behaviour, fee: "1", hits: 0, transactions: [] as string[] };
  const hanging: ServerResponse[] = [];
  const json = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { "content-type": "application/json" });
    res.end(JSON.stringify(body));
  };
  const succeed = (res: ServerResponse, body: Buffer, withFee: boolean) => {
    let req: { paymentPayload?: { network?: string; accepted?: { network?: string } } } = {};
    try {
      req = JSON.parse(body.toString("utf8"));
    } catch {}
    const transaction = `0x${randomBytes(32).toString("hex")}`;
    state.transactions.push(transaction);
    json(res, 200, {
      success: true,
      transaction,
      network: req.paymentPayload?.network ?? req.paymentPayload?.accepted?.network ?? "base",
      payer: "0x0000000000000000000000000000000000000001",
      note: marker,
      ...(withFee ? { fee: state.fee } : {}),
    });
  };
  const server = await startUpstream((req, res, body) => {
    if (req.method !== "POST" || req.url !== "/settle") return json(res, 404, { error: "not found" });
    state.hits++;
    switch (state.behaviour) {
      case "succeed":
        return succeed(res, body, false);
      case "fee":
        return succeed(res, body, true);
      case "reject":
        return json(res, 200, {
          success: false,
          errorReason: `insufficient_funds ${marker}`,
          transaction: "",
        });
      case "fail-once":
        if (state.hits === 1) return json(res, 503, { error: marker });
        return succeed(res, body, false);
      case "fail":
        return json(res, 503, { error: marker });
      case "garbage":
        res.writeHead(200, { "content-type": "application/json" });
        return res.end(`<html>${marker}`);
      case "hang":
        hanging.push(res);
        return;
    }
  });
  const fac = server as Facilitator;
  Object.defineProperties(fac, {
    behaviour: { get: () => state.behaviour, set: (b: FacilitatorBehaviour) => (state.behaviour = b) },
    fee: { get: () => state.fee, set: (f: string) => (state.fee = f) },
    hits: { get: () => state.hits },
    transactions: { get: () => state.transactions },
  });
  fac.marker = marker;
  const close = server.close;
  fac.close = async () => {
    for (const res of hanging) res.destroy();
    await close();
  };
  return fac;
}
