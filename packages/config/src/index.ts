export * from "./config.ts";
