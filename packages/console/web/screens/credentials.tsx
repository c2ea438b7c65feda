import { useState } from "preact/hooks";
import { unwrap } from "../api.ts";
import { PagedTable, usePage, WithId } from "../list/index.ts";
import type { Credential, PutCredentialBody } from "../types.ts";
import { ErrorBox, fmtTime, formValues, Page, useAction, useSession } from "../ui.tsx";
import { CreateCredential, isOAuth } from "./credential-form.tsx";

/**
 * Credentials: secrets go in (password fields, cleared after each submit) and never come back;
 * the API itself only ever answers the last-4 `hint`.
 */
export function CredentialsScreen() {
  const { api } = useSession();
  const list = usePage((page) => unwrap(api.GET("/v1/credentials", { params: { query: page } })), "");
  const [rotating, setRotating] = useState<string>();
  const [deleting, setDeleting] = useState<string>();
  const { error, run } = useAction();
  const remove = async (id: string) => {
    await run(async () => {
      await unwrap(api.DELETE("/v1/credentials/{id}", { params: { path: { id } } }));
      list.reload();
    });
    setDeleting(undefined);
  };

  return (
    <Page title="Credentials">
      <CreateCredential onCreated={list.reload} />
      <h2>Stored credentials</h2>
      <PagedTable
        list={list}
        error={error}
        rowKey={(c) => c.id}
        columns={[
          {
            head: "Name",
            cell: (c) => <WithId id={c.id}>{c.name}</WithId>,
          },
          { head: "Kind", cell: (c) => c.kind },
          { head: "Injected as", cellClass: "mono", cell: (c) => <InjectedAs c={c} /> },
          { head: "Secret", cellClass: "mono", cell: (c) => `…${c.hint}` },
          { head: "Version", cell: (c) => c.version },
          { head: "Updated", cell: (c) => fmtTime(c.updated_at) },
          {
            head: <span class="sr-only">Actions</span>,
            cellClass: "row-actions",
            cell: (c) => (
              <>
                <button type="button" class="secondary" onClick={() => setRotating(c.id)}>
                  Rotate
                </button>
                {deleting === c.id ? (
                  <button type="button" class="danger" onClick={() => remove(c.id)}>
                    Confirm delete
                  </button>
                ) : (
                  <button type="button" class="danger" onClick={() => setDeleting(c.id)}>
                    Delete
                  </button>
                )}
              </>
            ),
          },
        ]}
        empty="No credentials yet."
        path="/credentials"
        query={{}}
      />
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

/** Where the secret goes in the upstream request, and for OAuth where its tokens come from. */
function InjectedAs({ c }: { c: Credential }) {
  return (
    <>
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
    </>
  );
}

function Rotate(props: { id: string; credential: Credential | undefined; onDone: () => void }) {
  const { api } = useSession();
  const { error, run } = useAction();
  return (
    <form
      class="form"
      aria-label="Rotate credential"
      onSubmit={async (e) => {
        e.preventDefault();
        const v = formValues(e.currentTarget);
        const body: PutCredentialBody = { secret: v.secret ?? "" };
        if (v.name) body.name = v.name;
        await run(async () => {
          await unwrap(api.PUT("/v1/credentials/{id}", { params: { path: { id: props.id } }, body }));
          props.onDone();
        });
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
