/** The protocols' recorded fields the Invocation schema and its list filters are derived from. */
export { RECORDED } from "@gw/invocations";
export * from "./document.ts";
export { COMPONENTS } from "./families/index.ts";
export type { Route } from "./route.ts";
