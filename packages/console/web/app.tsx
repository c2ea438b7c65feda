import { useEffect, useMemo, useState } from "preact/hooks";
import { createApi, unwrap } from "./api.ts";
import { href, useRoute } from "./router.ts";
import { AgentEventsScreen } from "./screens/agent-events.tsx";
import { AgentsScreen } from "./screens/agents.tsx";
import { AnalyticsScreen } from "./screens/analytics.tsx";
import { ApprovalsScreen } from "./screens/approvals.tsx";
import { CredentialsScreen } from "./screens/credentials.tsx";
import { InvocationsScreen } from "./screens/invocations.tsx";
import { OverviewScreen } from "./screens/overview.tsx";
import { PolicyScreen } from "./screens/policy.tsx";
import { SettlementScreen } from "./screens/settlement.tsx";
import { SignIn } from "./screens/signin.tsx";
import { storedToken, storeToken } from "./session.ts";
import type { Capabilities, Me } from "./types.ts";
import { messageOf, type Session, SessionContext } from "./ui.tsx";

const NAV: Array<[string, string]> = [
  ["/", "Overview"],
  ["/agents", "Agents"],
  ["/credentials", "Credentials"],
  ["/invocations", "Invocations"],
  ["/policy", "Policy"],
  ["/approvals", "Approvals"],
  ["/settlement", "Settlement"],
  ["/analytics", "Analytics"],
  ["/agent-events", "Agent events"],
];

export function App() {
  const [token, setToken] = useState<string | null>(storedToken);
  const [ident, setIdent] = useState<{ me: Me; caps: Capabilities } | null>(null);
  const [signInError, setSignInError] = useState<string>();
  const route = useRoute();

  const signOut = (why?: string) => {
    storeToken(null);
    setToken(null);
    setIdent(null);
    setSignInError(why);
  };
  const api = useMemo(
    () =>
      createApi({
        token: () => token,
        onUnauthorized: () => signOut("The token was rejected (missing, invalid or expired). Sign in again."),
      }),
    [token],
  );

  // A stored token is checked once per page load; a rejected one sends the user back to sign-in.
  useEffect(() => {
    if (!token || ident) return;
    let live = true;
    Promise.all([unwrap(api.GET("/v1/me")), unwrap(api.GET("/v1/capabilities"))]).then(
      ([me, caps]) => live && setIdent({ me, caps }),
      (e: unknown) => live && signOut(messageOf(e)),
    );
    return () => {
      live = false;
    };
  }, [token, ident, api]);

  if (!token) {
    return (
      <SignIn
        error={signInError}
        onToken={(t) => {
          storeToken(t);
          setSignInError(undefined);
          setToken(t);
        }}
      />
    );
  }
  if (!ident) {
    return (
      <main class="center" aria-busy="true">
        <p>Signing in…</p>
      </main>
    );
  }
  const session: Session = { api, me: ident.me, caps: ident.caps };
  const section = `/${route.segments[0] ?? ""}`;
  return (
    <SessionContext.Provider value={session}>
      {/* A button, not a link: hash links are routes here. */}
      <button type="button" class="skip" onClick={() => document.getElementById("main")?.focus()}>
        Skip to content
      </button>
      <header class="top">
        <a class="brand" href="#/">
          Agent gateway
        </a>
        <p class="who" data-testid="identity">
          <span title="tenant">{ident.me.tenant_id}</span> · <span title="user">{ident.me.user_id}</span>
        </p>
        <button type="button" class="link" onClick={() => signOut()}>
          Sign out
        </button>
      </header>
      <nav class="nav" aria-label="Sections">
        {NAV.map(([path, label]) => (
          <a key={path} href={href(path)} aria-current={section === path ? "page" : undefined}>
            {label}
          </a>
        ))}
      </nav>
      <main id="main" tabIndex={-1}>
        <Screen section={section} />
      </main>
    </SessionContext.Provider>
  );
}

function Screen({ section }: { section: string }) {
  switch (section) {
    case "/agents":
      return <AgentsScreen />;
    case "/credentials":
      return <CredentialsScreen />;
    case "/invocations":
      return <InvocationsScreen />;
    case "/policy":
      return <PolicyScreen />;
    case "/approvals":
      return <ApprovalsScreen />;
    case "/settlement":
      return <SettlementScreen />;
    case "/analytics":
      return <AnalyticsScreen />;
    case "/agent-events":
      return <AgentEventsScreen />;
    default:
      return <OverviewScreen />;
  }
}
