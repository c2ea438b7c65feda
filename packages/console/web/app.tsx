import type { JSX } from "preact";
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { createApi, unwrap } from "./api.ts";
import { completeSignIn, forgetPending, isCallback, loadSettings, type OidcSettings } from "./oidc.ts";
import { href, useRoute } from "./router.ts";
import { AgentEventsScreen } from "./screens/agent-events.tsx";
import { AgentsScreen } from "./screens/agents.tsx";
import { AnalyticsScreen } from "./screens/analytics.tsx";
import { ApprovalsScreen } from "./screens/approvals.tsx";
import { AuditScreen } from "./screens/audit.tsx";
import { ConnectionsScreen } from "./screens/connections.tsx";
import { CredentialsScreen } from "./screens/credentials.tsx";
import { InvocationsScreen } from "./screens/invocations.tsx";
import { OverviewScreen } from "./screens/overview.tsx";
import { PolicyScreen } from "./screens/policy.tsx";
import { SettlementScreen } from "./screens/settlement.tsx";
import { SignIn } from "./screens/signin.tsx";
import { readSession, type StoredSession, storeSession } from "./session.ts";
import type { Capabilities, Me, Surfaces } from "./types.ts";
import { messageOf, NotEnabled, type Session, SessionContext } from "./ui.tsx";

/**
 * The sections, in the order the navigation shows them: a screen each, and the surface of
 * /v1/capabilities it needs (a deployment without it shows "not enabled" in its place).
 */
const SECTIONS: Array<{
  path: string;
  label: string;
  Screen: () => JSX.Element;
  surface?: keyof Surfaces;
  what?: string;
}> = [
  { path: "/", label: "Overview", Screen: OverviewScreen },
  { path: "/agents", label: "Agents", Screen: AgentsScreen },
  { path: "/credentials", label: "Credentials", Screen: CredentialsScreen, surface: "credentials" },
  { path: "/connections", label: "Connections", Screen: ConnectionsScreen, surface: "credentials" },
  { path: "/invocations", label: "Invocations", Screen: InvocationsScreen },
  { path: "/policy", label: "Policy", Screen: PolicyScreen, surface: "policy" },
  { path: "/approvals", label: "Approvals", Screen: ApprovalsScreen, surface: "approvals" },
  { path: "/settlement", label: "Settlement", Screen: SettlementScreen, surface: "settlement" },
  { path: "/analytics", label: "Analytics", Screen: AnalyticsScreen, surface: "analytics" },
  { path: "/agent-events", label: "Agent events", Screen: AgentEventsScreen, surface: "agent_events" },
  { path: "/audit", label: "Audit", Screen: AuditScreen, surface: "audit", what: "The audit log" },
];

const EXPIRED = "Your sign-in expired. Sign in again.";
/** setTimeout's longest delay (about 24.8 days); a later expiry is checked again then. */
const MAX_DELAY_MS = 2 ** 31 - 1;

export function App() {
  const [initial] = useState(() => readSession());
  const [held, setHeld] = useState<StoredSession | null>(initial.session);
  const token = held?.token ?? null;
  const [ident, setIdent] = useState<{ me: Me; caps: Capabilities } | null>(null);
  const [signInError, setSignInError] = useState<string | undefined>(initial.expired ? EXPIRED : undefined);
  // undefined while /console/config.json is read; null: no identity provider on this deployment.
  const [oidc, setOidc] = useState<OidcSettings | null | undefined>(undefined);
  const [completing, setCompleting] = useState(() => isCallback(new URL(location.href)));
  const completeStarted = useRef(false);
  const route = useRoute();

  const signOut = (why?: string) => {
    storeSession(null);
    forgetPending();
    setHeld(null);
    setIdent(null);
    setSignInError(why);
  };
  const signInWith = (next: StoredSession) => {
    storeSession(next);
    setSignInError(undefined);
    setIdent(null);
    setHeld(next);
  };
  const api = useMemo(
    () =>
      createApi({
        token: () => token,
        onUnauthorized: () => signOut("The token was rejected (missing, invalid or expired). Sign in again."),
      }),
    [token],
  );

  useEffect(() => {
    loadSettings().then(setOidc);
  }, []);

  // The identity provider sent the browser back (`/console/?code=…&state=…` or `?error=…`): the
  // answer leaves the address bar and the history at once, and is used at most once.
  useEffect(() => {
    if (!completing || oidc === undefined || completeStarted.current) return;
    completeStarted.current = true;
    const answer = new URL(location.href);
    history.replaceState(null, "", `${location.pathname}${location.hash || "#/"}`);
    const done = oidc
      ? completeSignIn(oidc, answer)
      : Promise.reject(new Error("This deployment has no identity provider sign-in."));
    done.then(
      (next) => {
        setCompleting(false);
        signInWith(next);
      },
      (e: unknown) => {
        setCompleting(false);
        signOut(messageOf(e));
      },
    );
  }, [completing, oidc]);

  // A token whose expiry is known sends the operator back to sign-in when it expires, rather than
  // at the first refused call.
  useEffect(() => {
    const expiresAt = held?.expiresAt;
    if (!held || expiresAt === undefined) return;
    const timer = setTimeout(
      () => (Date.now() >= expiresAt ? signOut(EXPIRED) : setHeld({ ...held })),
      Math.min(Math.max(0, expiresAt - Date.now()), MAX_DELAY_MS),
    );
    return () => clearTimeout(timer);
  }, [held]);

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

  if (completing) {
    return (
      <main class="center" aria-busy="true">
        <p>Signing in…</p>
      </main>
    );
  }
  if (!token) {
    return (
      <SignIn
        error={signInError}
        oidc={oidc}
        onToken={(t) => {
          forgetPending();
          signInWith({ token: t });
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
        {SECTIONS.map(({ path, label }) => (
          <a key={path} href={href(path)} aria-current={section === path ? "page" : undefined}>
            {label}
          </a>
        ))}
      </nav>
      <main id="main" tabIndex={-1}>
        <Screen section={section} surfaces={ident.caps.surfaces} />
      </main>
    </SessionContext.Provider>
  );
}

/** The section's screen, or "not enabled" when the deployment lacks its surface. */
function Screen({ section, surfaces }: { section: string; surfaces: Surfaces }) {
  const s = SECTIONS.find((x) => x.path === section) ?? SECTIONS[0];
  if (!s) throw new Error("no sections");
  if (s.surface && !surfaces[s.surface]) return <NotEnabled what={s.what ?? s.label} />;
  return <s.Screen />;
}
