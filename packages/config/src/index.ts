export * from "./cli.ts";
export * from "./config.ts";
export * from "./origin.ts";
