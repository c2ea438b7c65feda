import { defineProject } from "vitest/config";

export default defineProject({ test: { name: "@gw/audit", testTimeout: 30_000, hookTimeout: 60_000 } });
