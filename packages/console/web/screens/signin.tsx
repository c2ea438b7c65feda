import { useEffect, useState } from "preact/hooks";
import { issuerHost, type OidcSettings, startSignIn } from "../oidc.ts";
import { ErrorBox } from "../ui.tsx";

/**
 * Sign in with the organisation's identity provider when the deployment has one, or paste a bearer
 * token (the dev token `pnpm start` prints works); either is checked against /v1/me.
 */
export function SignIn(props: {
  error: string | undefined;
  oidc: OidcSettings | null | undefined;
  onToken: (token: string) => void;
}) {
  const [value, setValue] = useState("");
  const [local, setLocal] = useState<string>();
  const [leaving, setLeaving] = useState(false);
  const [idpError, setIdpError] = useState<string>();
  const oidc = props.oidc;
  // Back from the identity provider's page through the browser's history: the button works again.
  useEffect(() => {
    const again = () => setLeaving(false);
    addEventListener("pageshow", again);
    return () => removeEventListener("pageshow", again);
  }, []);
  return (
    <main class="center signin">
      {oidc && (
        <section class="signin-idp" aria-labelledby="signin-idp-title">
          <h1 id="signin-idp-title">Agent gateway console</h1>
          <button
            type="button"
            disabled={leaving}
            onClick={() => {
              setLeaving(true);
              setIdpError(undefined);
              // Rejects when the browser cannot go to the identity provider (its message is shown).
              startSignIn(oidc).catch((e: unknown) => {
                setLeaving(false);
                setIdpError(e instanceof Error ? e.message : String(e));
              });
            }}
          >
            Sign in with {issuerHost(oidc)}
          </button>
          {/* Why the last sign-in ended or failed, beside the button that starts the next one. */}
          <ErrorBox message={idpError ?? props.error} />
          <p class="hint">Or paste a token below (development tokens, automation).</p>
        </section>
      )}
      <form
        aria-labelledby="signin-title"
        onSubmit={(e) => {
          e.preventDefault();
          const t = value.trim().replace(/^Bearer\s+/i, "");
          if (!t) return setLocal("Paste a token first.");
          setLocal(undefined);
          props.onToken(t);
        }}
      >
        {oidc ? <h2 id="signin-title">Paste a token</h2> : <h1 id="signin-title">Agent gateway console</h1>}
        <label for="token">Access token</label>
        <textarea
          id="token"
          name="token"
          rows={5}
          autoComplete="off"
          spellcheck={false}
          placeholder="eyJhbGciOi…"
          value={value}
          onInput={(e) => setValue(e.currentTarget.value)}
        />
        <p class="hint">
          A bearer token for your tenant. With <code>pnpm start</code>, paste the dev token it prints: the
          operator's, which may read captured bodies and decide approvals. The token is kept in this tab only
          (sessionStorage).
        </p>
        <ErrorBox message={local ?? (oidc ? undefined : props.error)} />
        <button type="submit">Sign in</button>
      </form>
    </main>
  );
}
