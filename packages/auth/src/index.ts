export * from "./dev-token.ts";
export * from "./verify.ts";
