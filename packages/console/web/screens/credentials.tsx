import { useState } from "preact/hooks";
import { unwrap } from "../api.ts";
import { useRoute } from "../router.ts";
import type { Credential, PutCredentialBody } from "../types.ts";
import {
  ErrorBox,
  fmtTime,
  formValues,
  messageOf,
  NotEnabled,
  Page,
  Pager,
  useLoad,
  useSession,
} from "../ui.tsx";
import { CreateCredential, isOAuth } from "./credential-form.tsx";

/**
 * Credentials: secrets go in (password fields, cleared after each submit) and never come back;
 * the API itself only ever answers the last-4 `hint`.
 */
export function CredentialsScreen() {
  const { caps } = useSession();
  if (!caps.surfaces.credentials) return <NotEnabled what="Credentials" />;
  return <Credentials />;
}

function Credentials() {
  const { api } = useSession();
  const route = useRoute();
  const offset = Number(route.query.get("offset") ?? 0) || 0;
  const list = useLoad(
    () => unwrap(api.GET("/v1/credentials", { params: { query: { offset, limit: 20 } } })),
    String(offset),
  );
  const [rotating, setRotating] = useState<string>();
  const [deleting, setDeleting] = useState<string>();
  const [error, setError] = useState<string>();

  return (
    <Page title="Credentials">
      <CreateCredential onCreated={list.reload} />
      <h2>Stored credentials</h2>
      <ErrorBox message={list.error ?? error} />
      {list.data ? (
        <>
          <div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Kind</th>
                  <th scope="col">Injected as</th>
                  <th scope="col">Secret</th>
                  <th scope="col">Version</th>
                  <th scope="col">Updated</th>
                  <th scope="col">
                    <span class="sr-only">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {list.data.data.map((c) => (
                  <tr key={c.id}>
                    <td>
                      {c.name}
                      <br />
                      <code class="small">{c.id}</code>
                    </td>
                    <td>{c.kind}</td>
                    <td class="mono">
                      {c.kind === "api_key" ? (c.header_name ?? "X-Api-Key") : "Authorization"}
                      {isOAuth(c.kind) ? (
                        <>
                          <br />
                          <span class="small">
                            token from {c.token_url} as {c.client_id}
                            {c.scope ? ` (scope ${c.scope})` : ""}
                          </span>
                        </>
                      ) : null}
                    </td>
                    <td class="mono">…{c.hint}</td>
                    <td>{c.version}</td>
                    <td>{fmtTime(c.updated_at)}</td>
                    <td class="row-actions">
                      <button type="button" class="secondary" onClick={() => setRotating(c.id)}>
                        Rotate
                      </button>
                      {deleting === c.id ? (
                        <button
                          type="button"
                          class="danger"
                          onClick={async () => {
                            setError(undefined);
                            try {
                              await unwrap(
                                api.DELETE("/v1/credentials/{id}", { params: { path: { id: c.id } } }),
                              );
                              list.reload();
                            } catch (e) {
                              setError(messageOf(e));
                            }
                            setDeleting(undefined);
                          }}
                        >
                          Confirm delete
                        </button>
                      ) : (
                        <button type="button" class="danger" onClick={() => setDeleting(c.id)}>
                          Delete
                        </button>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {list.data.total === 0 ? <p class="empty">No credentials yet.</p> : null}
          <Pager path="/credentials" query={{}} {...list.data} />
        </>
      ) : null}
      {rotating ? (
        <Rotate
          credential={list.data?.data.find((c) => c.id === rotating)}
          id={rotating}
          onDone={() => {
            setRotating(undefined);
            list.reload();
          }}
        />
      ) : null}
    </Page>
  );
}

function Rotate(props: { id: string; credential: Credential | undefined; onDone: () => void }) {
  const { api } = useSession();
  const [error, setError] = useState<string>();
  return (
    <form
      class="form"
      aria-label="Rotate credential"
      onSubmit={async (e) => {
        e.preventDefault();
        const v = formValues(e.currentTarget);
        const body: PutCredentialBody = { secret: v.secret ?? "" };
        if (v.name) body.name = v.name;
        setError(undefined);
        try {
          await unwrap(api.PUT("/v1/credentials/{id}", { params: { path: { id: props.id } }, body }));
          props.onDone();
        } catch (err) {
          setError(messageOf(err));
        }
      }}
    >
      <h2>Rotate {props.credential?.name ?? props.id}</h2>
      <label>
        {isOAuth(props.credential?.kind) ? "New client secret" : "New secret"}
        <input name="secret" type="password" required autoComplete="new-password" />
      </label>
      <label>
        New name (optional)
        <input name="name" autoComplete="off" />
      </label>
      <ErrorBox message={error} />
      <div class="actions">
        <button type="submit">Rotate</button>
        <button type="button" class="secondary" onClick={props.onDone}>
          Cancel
        </button>
      </div>
    </form>
  );
}
