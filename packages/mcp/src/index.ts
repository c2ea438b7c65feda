export * from "./parse.ts";
