import { useState } from "preact/hooks";
import { ErrorBox } from "../ui.tsx";

/** Paste a bearer token (the dev token `pnpm start` prints works); it is checked against /v1/me. */
export function SignIn(props: { error: string | undefined; onToken: (token: string) => void }) {
  const [value, setValue] = useState("");
  const [local, setLocal] = useState<string>();
  return (
    <main class="center signin">
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
        <h1 id="signin-title">Agent gateway console</h1>
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
          A bearer token for your tenant. With <code>pnpm start</code>, paste the dev token it prints. The
          token is kept in this tab only (sessionStorage).
        </p>
        <ErrorBox message={local ?? props.error} />
        <button type="submit">Sign in</button>
      </form>
    </main>
  );
}
