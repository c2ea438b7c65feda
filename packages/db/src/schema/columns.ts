import { timestamp } from "drizzle-orm/pg-core";

/** Timestamps are `timestamptz` read as Date; serializers write RFC 3339 UTC. */
export const tstz = (name: string) => timestamp(name, { withTimezone: true, mode: "date" });

export const timestamps = {
  createdAt: tstz("created_at").notNull().defaultNow(),
  updatedAt: tstz("updated_at").notNull().defaultNow(),
};
