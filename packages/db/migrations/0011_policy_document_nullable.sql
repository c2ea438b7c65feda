-- DELETE /v1/policy keeps the tenant's row with no document, so the version keeps counting: the
-- next PUT is numbered above every earlier version (docs/policy.md).
ALTER TABLE "policies" ALTER COLUMN "document" DROP NOT NULL;
