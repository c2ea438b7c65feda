import { Fields, Page, useSession } from "../ui.tsx";
import { LastHour } from "./glance.tsx";

const yes = (b: boolean) => (b ? "yes" : "no");

/**
 * The gateway at a glance (the last hour's calls, errors, latency and failures), then who the token
 * says you are (/v1/me) and what this deployment offers (/v1/capabilities).
 */
export function OverviewScreen() {
  const { me, caps } = useSession();
  return (
    <Page title="Overview">
      <LastHour />
      <h2>Signed in as</h2>
      <Fields
        rows={[
          ["Tenant", <code key="t">{me.tenant_id}</code>],
          ["User", <code key="u">{me.user_id}</code>],
          ["Scopes", me.scopes.length ? me.scopes.join(" ") : "none"],
          ["Can read invocation bodies", yes(me.can_read_invocation_bodies)],
        ]}
      />
      <h2>This deployment</h2>
      <Fields
        rows={[
          ["Store", caps.posture.store],
          ["Key-management key configured", yes(caps.posture.kms_key_configured)],
          ["Receipts", caps.posture.receipts_enabled ? `on (${caps.posture.receipt_actor})` : "off"],
          ["Settle-then-forward", yes(caps.posture.settlement_orchestration)],
          ["Verified action required", yes(caps.verified_action_required)],
          [
            "Surfaces",
            Object.entries(caps.surfaces)
              .map(([k, v]) => `${k}: ${v ? "on" : "off"}`)
              .join(", "),
          ],
        ]}
      />
      {caps.posture.store === "memory" ? (
        <p class="notice">
          The in-memory store is for development: everything is lost when the process stops.
        </p>
      ) : null}
    </Page>
  );
}
