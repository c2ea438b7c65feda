import type { Config } from "@gw/config";

/**
 * Which optional parts of the contract this deployment runs, decided once from the configuration.
 * Capabilities reports these values and the services mount and enforce by the same ones, so they
 * cannot disagree.
 */
export type Features = {
  /** `/v1/credentials` is mounted (GW_CREDENTIALS). */
  credentials: boolean;
  /** Verified-action mode: MCP tools/call needs a verified authorization (GW_VERIFIER_BINARY). */
  verifier: boolean;
  /** A receipt emitter is attached (GW_RECEIPT_SIGNING_KEY and GW_RECEIPT_ACTOR). */
  receipts: boolean;
  /** The actor URI receipts are signed as; empty when receipts are off. */
  receiptActor: string;
  /** Settle-then-forward is wired (GW_SETTLE_THEN_FORWARD). */
  settlement: boolean;
};

export function featuresOf(config: Config): Features {
  const receipts = config.GW_RECEIPT_SIGNING_KEY !== undefined && config.GW_RECEIPT_ACTOR !== undefined;
  return Object.freeze({
    credentials: config.GW_CREDENTIALS === "on",
    verifier: config.GW_VERIFIER_BINARY !== undefined,
    receipts,
    receiptActor: receipts ? (config.GW_RECEIPT_ACTOR ?? "") : "",
    settlement: config.GW_SETTLE_THEN_FORWARD,
  });
}
