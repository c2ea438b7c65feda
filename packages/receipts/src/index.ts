export * from "./digest.ts";
export * from "./emitter.ts";
export * from "./key.ts";
export { receiptRepo } from "./repos/receipts.ts";
export * from "./serialize.ts";
export * from "./sign.ts";
export * from "./verify.ts";
