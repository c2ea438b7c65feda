-- Answer guardrails (docs/policy.md): what the answer rules did to an invocation's answer, and
-- the kinds and counts they found (never the matched text). Nullable, no default: no rewrite.
ALTER TABLE "invocations" ADD COLUMN IF NOT EXISTS "answer_action" text;
--> statement-breakpoint
ALTER TABLE "invocations" ADD COLUMN IF NOT EXISTS "answer_findings" jsonb;
