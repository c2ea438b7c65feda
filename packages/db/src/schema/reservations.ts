import { pgTable, primaryKey, text } from "drizzle-orm/pg-core";
import { tstz } from "./columns.ts";

/**
 * One-shot keys taken by a call when its invocation is created, in the same statement: a verified
 * request digest (scope: the tenant) or an x402 payment nonce (scope: "" — one authorization is
 * one on-chain object, so the whole deployment shares it). Never released.
 */
export const reservations = pgTable(
  "reservations",
  {
    kind: text("kind", { enum: ["verified_digest", "payment_nonce"] }).notNull(),
    scope: text("scope").notNull(),
    key: text("key").notNull(),
    invocationId: text("invocation_id").notNull(),
    createdAt: tstz("created_at").notNull().defaultNow(),
  },
  (t) => [primaryKey({ name: "reservations_pkey", columns: [t.kind, t.scope, t.key] })],
);

export type ReservationKind = (typeof reservations.$inferSelect)["kind"];
export type Reservation = { kind: ReservationKind; scope: string; key: string };
