-- An audit event is appended by one call of this function (ADR 0053): the tenant's chain lock, the
-- read of the chain's head and the insert, in one statement sent by the gateway. It was two
-- statements pipelined on the write's transaction (the lock, then an insert that read the head),
-- each paying its own protocol messages, plan and client-side work. The head is read after the lock
-- is granted: a VOLATILE plpgsql function takes a fresh snapshot for each statement it runs, so in
-- READ COMMITTED the SELECT sees every event committed by the writer it waited for.
-- The lock is the one the earlier statements took (class 741913, key hashtext(tenant_id)), so a
-- replica still running them during a rollout and this function serialise on the same lock and
-- keep one linear chain.
CREATE OR REPLACE FUNCTION "gw_audit_append"(
	p_id text, p_tenant_id text, p_actor text, p_action text, p_resource_id text, p_request_id text,
	p_created_at timestamptz, p_changes jsonb, p_canonical text,
	OUT seq bigint, OUT prev_digest text, OUT digest text
) LANGUAGE plpgsql VOLATILE AS $$
DECLARE
	head_seq bigint;
	head_digest text;
BEGIN
	PERFORM pg_advisory_xact_lock(741913, hashtext(p_tenant_id));
	SELECT e.seq, e.digest INTO head_seq, head_digest
		FROM audit_events e WHERE e.tenant_id = p_tenant_id ORDER BY e.seq DESC LIMIT 1;
	seq := coalesce(head_seq, 0) + 1;
	prev_digest := head_digest;
	digest := 'sha256:' || encode(sha256(convert_to(coalesce(head_digest, '') || p_canonical, 'UTF8')), 'hex');
	INSERT INTO audit_events
		(id, tenant_id, seq, actor, action, resource_id, request_id, created_at, changes, prev_digest, digest)
		VALUES (p_id, p_tenant_id, seq, p_actor, p_action, p_resource_id, p_request_id, p_created_at, p_changes,
			prev_digest, digest);
END $$;
