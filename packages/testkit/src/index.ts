// `@gw/fixtures` holds what needs no runtime (so packages below @gw/runtime can test with it
// without a workspace cycle); this kit adds the service apps served on a real runtime.
export * from "@gw/fixtures";
export * from "./calls.ts";
export * from "./deploy.ts";
