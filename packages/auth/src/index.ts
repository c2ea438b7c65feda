export * from "./claims.ts";
export * from "./dev-token.ts";
export * from "./jwks.ts";
export * from "./me.ts";
export * from "./resource-metadata.ts";
export * from "./verify.ts";
