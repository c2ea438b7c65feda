// An SDK 1.x MCP server (revision 2025-11-25, stateful sessions, SSE answers) run as its own
// process for the bench: `node --import tsx mcp-v1-upstream.ts`. Prints `{"port": n}` once listening.
import { startMcpV1Server } from "@gw/testkit";

const server = await startMcpV1Server({ name: "bench-v1", mode: "stateful" });
console.log(JSON.stringify({ port: Number(new URL(server.url).port) }));
process.once("SIGTERM", () => void server.close().then(() => process.exit(0)));
