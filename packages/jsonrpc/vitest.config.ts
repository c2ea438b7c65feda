import { defineProject } from "vitest/config";

export default defineProject({ test: { name: "@gw/jsonrpc", testTimeout: 30_000 } });
