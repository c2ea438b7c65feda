// "fs" as @modelcontextprotocol/conformance sees it on Node 20, which has no fs.globSync: the
// suite imports it for its tier-check command only, never for the server suites run here.
export * from "node:fs";
export { default } from "node:fs";
export function globSync() {
  throw new Error("fs.globSync is not available on this Node version");
}
