import { useState } from "preact/hooks";
import { unwrap } from "../api.ts";
import type { CreateCredentialBody, Credential } from "../types.ts";
import { Done, ErrorBox, formValues, useAction, useSession } from "../ui.tsx";

type Kind = Credential["kind"];
const KINDS: Array<[Kind, string]> = [
  ["bearer", "bearer (Authorization: Bearer …)"],
  ["api_key", "api_key (header)"],
  ["oauth2_client_credentials", "OAuth client credentials"],
  ["oauth2_token_exchange", "OAuth token exchange (caller's token)"],
];

/** The kinds whose secret is an OAuth client secret that buys access tokens. */
export function isOAuth(kind: Kind | undefined): boolean {
  return kind === "oauth2_client_credentials" || kind === "oauth2_token_exchange";
}

/**
 * The new-credential form. The secret is a password field, cleared after each submit; the API
 * never answers it (nor any access token) back, only the last-4 `hint`.
 */
export function CreateCredential({ onCreated }: { onCreated: () => void }) {
  const { api } = useSession();
  const [kind, setKind] = useState<Kind>("bearer");
  const { error, run } = useAction();
  const [done, setDone] = useState<string>();
  const oauth = isOAuth(kind);
  return (
    <form
      class="form"
      aria-label="New credential"
      onSubmit={async (e) => {
        e.preventDefault();
        const form = e.currentTarget;
        const v = formValues(form);
        const body: CreateCredentialBody = { name: v.name ?? "", kind, secret: v.secret ?? "" };
        if (kind === "api_key" && v.header_name) body.header_name = v.header_name;
        if (oauth) {
          body.token_url = v.token_url ?? "";
          body.client_id = v.client_id ?? "";
          if (v.scope) body.scope = v.scope;
          if (v.audience) body.audience = v.audience;
          if (v.auth_method === "client_secret_post") body.auth_method = "client_secret_post";
        }
        if (v.allowed_hosts) body.allowed_hosts = v.allowed_hosts.split(/[\s,]+/).filter(Boolean);
        setDone(undefined);
        await run(async () => {
          const c = await unwrap(api.POST("/v1/credentials", { body }));
          form.reset();
          setDone(`Stored “${c.name}” (${c.id}).`);
          onCreated();
        });
      }}
    >
      <h2>New credential</h2>
      <div class="row">
        <label class="grow">
          Name
          <input name="name" required autoComplete="off" />
        </label>
        <label>
          Kind
          <select
            name="kind"
            value={kind}
            onChange={(e) => setKind(KINDS.find(([k]) => k === e.currentTarget.value)?.[0] ?? "bearer")}
          >
            {KINDS.map(([k, label]) => (
              <option key={k} value={k}>
                {label}
              </option>
            ))}
          </select>
        </label>
        {kind === "api_key" ? (
          <label>
            Header name
            <input name="header_name" placeholder="X-Api-Key" autoComplete="off" />
          </label>
        ) : null}
      </div>
      {oauth ? <OAuthFields /> : null}
      <label>
        {oauth ? "Client secret" : "Secret"}
        <input name="secret" type="password" required autoComplete="new-password" />
      </label>
      <label>
        <span>
          Allowed hosts (optional, comma-separated; <code>*.example.com</code> allowed)
        </span>
        <input name="allowed_hosts" autoComplete="off" />
      </label>
      <ErrorBox message={error} />
      <Done message={done} />
      <div class="actions">
        <button type="submit">Store credential</button>
      </div>
    </form>
  );
}

/** The OAuth client's public settings (docs/credentials.md, "OAuth credentials"). */
function OAuthFields() {
  return (
    <>
      <div class="row">
        <label class="grow">
          Token URL
          <input name="token_url" type="url" required placeholder="https://auth.example.com/oauth/token" />
        </label>
        <label>
          Client ID
          <input name="client_id" required autoComplete="off" />
        </label>
      </div>
      <div class="row">
        <label class="grow">
          Scope (optional)
          <input name="scope" autoComplete="off" />
        </label>
        <label class="grow">
          Audience (optional)
          <input name="audience" autoComplete="off" />
        </label>
        <label>
          Client authentication
          <select name="auth_method">
            <option value="client_secret_basic">client_secret_basic</option>
            <option value="client_secret_post">client_secret_post</option>
          </select>
        </label>
      </div>
    </>
  );
}
