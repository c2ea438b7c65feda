export * from "./client.ts";
export * from "./request.ts";
export * from "./subject.ts";
export * from "./tokens.ts";
