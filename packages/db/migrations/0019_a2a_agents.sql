-- A2A agents (docs/a2a.md): the card URL an agent may set, and what each invocation of one learned
-- (the JSON-RPC method, the task, its context and the last task state an answer carried). All
-- nullable and new: no rewrite of existing rows. The index is partial on a column every existing row
-- has null, so it holds no existing row; it answers "every invocation of one task, in order".
ALTER TABLE "agents" ADD COLUMN IF NOT EXISTS "card_url" text;
--> statement-breakpoint
ALTER TABLE "invocations" ADD COLUMN IF NOT EXISTS "a2a_method" text;
--> statement-breakpoint
ALTER TABLE "invocations" ADD COLUMN IF NOT EXISTS "a2a_task_id" text;
--> statement-breakpoint
ALTER TABLE "invocations" ADD COLUMN IF NOT EXISTS "a2a_context_id" text;
--> statement-breakpoint
ALTER TABLE "invocations" ADD COLUMN IF NOT EXISTS "a2a_task_state" text;
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "invocations_a2a_task_idx" ON "invocations" ("tenant_id", "a2a_task_id", "created_at") WHERE "a2a_task_id" IS NOT NULL;
