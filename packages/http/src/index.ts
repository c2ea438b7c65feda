export * from "./app.ts";
export * from "./body.ts";
export * from "./errors.ts";
export * from "./health.ts";
export * from "./query.ts";
export * from "./serve.ts";
export * from "./text.ts";
export * from "./timestamp.ts";
