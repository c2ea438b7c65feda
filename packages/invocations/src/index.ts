export {
  ERROR_CLASSES,
  type ErrorClass,
  INVOCATION_MODES,
  INVOCATION_STATUSES,
  type InvocationStatus,
  type InvocationUpdate,
  type NewInvocation,
  type Reservation,
  ReservationTaken,
} from "@gw/db";
export * from "./heartbeat.ts";
export * from "./invocations.ts";
export * from "./lifecycle.ts";
export * from "./outcome.ts";
export * from "./reconcile.ts";
export * from "./serialize.ts";
export * from "./stored-job.ts";
