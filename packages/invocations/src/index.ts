export {
  ERROR_CLASSES,
  type ErrorClass,
  INVOCATION_MODES,
  INVOCATION_STATUSES,
  type InvocationStatus,
  RECORDED,
  RECORDED_FIELDS,
  RECORDED_FILTERS,
  type RecordedEntry,
  type RecordedField,
  type RecordedKey,
  type RequestRecordedKey,
  type Reservation,
} from "@gw/db";
export * from "./heartbeat.ts";
export * from "./invocations.ts";
export * from "./lifecycle.ts";
export * from "./outcome.ts";
export * from "./reconcile.ts";
export type { DecisionRecord } from "./repos/decision-rows.ts";
export { ReservationTaken } from "./repos/invocation-reservations.ts";
export { type InvocationUpdate, invocationRepo, type NewInvocation } from "./repos/invocations.ts";
export * from "./serialize.ts";
