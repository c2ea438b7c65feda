export * from "./app.ts";
