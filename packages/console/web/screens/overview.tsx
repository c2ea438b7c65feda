import type { Capabilities } from "../types.ts";
import { Fields, Page, useSession } from "../ui.tsx";
import { LastHour } from "./glance.tsx";

const yes = (b: boolean) => (b ? "yes" : "no");

type Posture = Capabilities["posture"];

/** Which store, and where: the embedded store on disk names its data directory (GW_DATA_DIR). */
function storeOf(p: Posture) {
  if (p.data_dir) {
    return (
      <>
        embedded, on disk in <code>{p.data_dir}</code> (GW_DATA_DIR)
      </>
    );
  }
  return p.store === "memory" ? "embedded, in memory" : "Postgres";
}

/** Whose key seals credentials: the operator's, one kept beside the data, or this process's own. */
function keyOf(p: Posture) {
  if (p.kms_key_configured) return "yes (GW_KMS_KEY)";
  return p.data_dir
    ? "no: a development key kept in the data directory (credentials survive a restart)"
    : "no: a key of this process only (credentials do not survive a restart)";
}

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
          ["Store", storeOf(caps.posture)],
          ["Key-management key configured", keyOf(caps.posture)],
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
      ) : caps.posture.data_dir ? (
        <p class="notice">
          The embedded store is for development: one process keeps its data across restarts in{" "}
          <code>{caps.posture.data_dir}</code>. Use Postgres (DATABASE_URL) and GW_KMS_KEY for a deployment.
        </p>
      ) : null}
    </Page>
  );
}
