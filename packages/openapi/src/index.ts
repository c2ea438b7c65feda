export * from "./document.ts";
export type { Route } from "./route.ts";
