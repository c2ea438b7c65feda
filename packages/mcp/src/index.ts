export * from "./headers.ts";
export * from "./parse.ts";
