import { useEffect, useRef, useState } from "preact/hooks";
import { unwrap } from "../api.ts";
import { Table } from "../list/index.ts";
import { href, useRoute } from "../router.ts";
import type { Connection, Credential } from "../types.ts";
import { ErrorBox, fmtTime, Page, useAction, useLoad, useSession } from "../ui.tsx";

const FAILURES: Record<string, string> = {
  invalid_state: "The connect link expired or was already used. Connect again.",
  denied: "The provider did not grant access.",
  exchange_failed: "The provider's answer could not be used. Connect again, or ask an operator.",
  not_completed:
    "This connect could not be completed in your session: it was already used, it expired, or someone else started it. Nothing was stored. Connect again.",
};

/** Moves to another hash of this screen without a history entry (a spent code is not kept there). */
function replaceHash(query: Record<string, string>) {
  location.replace(`${location.pathname}${location.search}${href("/connections", query)}`);
}

/**
 * Connections (docs/connections.md): the signed-in person's own grants for the tenant's per-user
 * credentials. Connect sends the browser to the provider, which sends it back through the
 * gateway's callback here with a one-time code (`#/connections?complete=<code>`, or
 * `?error=<reason>`): the screen completes it with the signed-in person's own token, so a connect
 * finishes only in the session of whoever started it, then shows `?connected=<name>`. Disconnect
 * removes the grant. A "connection required" answer points people at
 * `#/connections/<credential id>`.
 */
export function ConnectionsScreen() {
  const { api } = useSession();
  const route = useRoute();
  const wanted = route.segments[1];
  const load = useLoad(async () => {
    const [credentials, connections] = await Promise.all([
      unwrap(api.GET("/v1/credentials", { params: { query: { limit: 100, offset: 0 } } })),
      unwrap(api.GET("/v1/connections")),
    ]);
    return {
      perUser: credentials.data.filter((c: Credential) => c.kind === "oauth2_authorization_code"),
      mine: new Map(connections.data.map((c: Connection) => [c.credential_id, c])),
    };
  }, "connections");
  const [busy, setBusy] = useState<string>();
  const { error, run } = useAction();
  const connected = route.query.get("connected");
  const failed = route.query.get("error");
  const mine = (c: Credential) => load.data?.mine.get(c.id);
  const completing = route.query.get("complete");
  const spent = useRef<string>();

  useEffect(() => {
    if (!completing || spent.current === completing) return;
    spent.current = completing;
    unwrap(api.POST("/v1/connections/complete", { body: { code: completing } })).then(
      (done) => {
        replaceHash({ connected: done.credential_name });
        load.reload();
      },
      () => replaceHash({ error: "not_completed" }),
    );
  }, [completing]);

  // The row's buttons stay disabled while the browser leaves for the provider.
  const connect = async (credentialId: string) => {
    setBusy(credentialId);
    const left = await run(async () => {
      const started = await unwrap(api.POST("/v1/connections", { body: { credential_id: credentialId } }));
      location.assign(started.authorize_url);
    });
    if (!left) setBusy(undefined);
  };
  const disconnect = async (credentialId: string) => {
    setBusy(credentialId);
    await run(async () => {
      await unwrap(
        api.DELETE("/v1/connections/{credential_id}", { params: { path: { credential_id: credentialId } } }),
      );
      load.reload();
    });
    setBusy(undefined);
  };

  return (
    <Page title="Connections">
      <p>
        Some agents act on your behalf at another service: connect your own account there once, and the
        gateway uses your access for your calls only.
      </p>
      {completing ? (
        <p class="notice" role="status">
          Completing the connection…
        </p>
      ) : connected ? (
        <p class="notice" role="status">
          Connected to {connected}.
        </p>
      ) : null}
      <ErrorBox message={failed ? (FAILURES[failed] ?? "The connection failed.") : undefined} />
      <ErrorBox message={load.error ?? error} />
      {load.data ? (
        load.data.perUser.length === 0 ? (
          <p class="empty">No agent of this tenant needs your own account.</p>
        ) : (
          <Table
            rows={load.data.perUser}
            rowKey={(c) => c.id}
            rowProps={(c) => ({
              "data-credential": c.id,
              "aria-current": wanted === c.id ? "true" : undefined,
            })}
            columns={[
              {
                head: "Service",
                cell: (c) => (
                  <>
                    {c.name}
                    <br />
                    <span class="small">{c.authorization_url ? new URL(c.authorization_url).host : ""}</span>
                  </>
                ),
              },
              { head: "Status", cell: (c) => mine(c)?.status ?? "not connected" },
              { head: "Access granted", cellClass: "small", cell: (c) => mine(c)?.scopes.join(" ") || "—" },
              { head: "Last used", cell: (c) => fmtTime(mine(c)?.last_used_at) },
              {
                head: <span class="sr-only">Actions</span>,
                cellClass: "row-actions",
                cell: (c) =>
                  mine(c)?.status === "connected" ? (
                    <button
                      type="button"
                      class="danger"
                      disabled={busy === c.id}
                      onClick={() => disconnect(c.id)}
                    >
                      Disconnect
                    </button>
                  ) : (
                    <button type="button" disabled={busy === c.id} onClick={() => connect(c.id)}>
                      Connect
                    </button>
                  ),
              },
            ]}
          />
        )
      ) : null}
    </Page>
  );
}
