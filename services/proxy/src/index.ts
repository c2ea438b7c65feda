export * from "./app.ts";
export { DIRECT_ROUTES } from "./direct.ts";
