export * from "./audit.ts";
export { type AuditFilter, auditRepo } from "./repos/audit.ts";
export * from "./transaction.ts";
