export * from "./document.ts";
export { COMPONENTS } from "./families/index.ts";
export type { Route } from "./route.ts";
