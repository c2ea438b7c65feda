export * from "./client.ts";
export * from "./health.ts";
export * from "./migrate.ts";
export * from "./repos/agents.ts";
export * from "./repos/coalesce.ts";
export * from "./repos/credentials.ts";
export * from "./repos/settlement-configs.ts";
export * from "./schema/index.ts";
export * from "./store-health.ts";
export { schema };

import * as schema from "./schema/index.ts";

export * from "./repos/approvals.ts";
export * from "./repos/policies.ts";
export * from "./repos/receipts.ts";
