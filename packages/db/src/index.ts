export * from "./client.ts";
export * from "./coalesce.ts";
export * from "./errors.ts";
export * from "./health.ts";
export * from "./migrate.ts";
export * from "./page.ts";
export * from "./schema/index.ts";
export * from "./socket-url.ts";
export * from "./store-health.ts";
export { schema };

import * as schema from "./schema/index.ts";
