export * from "./canonical.ts";
export * from "./capabilities.ts";
export * from "./errors.ts";
export * from "./ids.ts";
export * from "./limits.ts";
export * from "./time.ts";
export * from "./validation.ts";
