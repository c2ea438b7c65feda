// Small shared pieces: data loading, error and "not enabled" notices, paging, formatting.
import type { ComponentChildren } from "preact";
import { createContext } from "preact";
import { useCallback, useContext, useEffect, useState } from "preact/hooks";
import type { Api } from "./api.ts";
import { href } from "./router.ts";
import type { Capabilities, Me } from "./types.ts";

export type Session = { api: Api; me: Me; caps: Capabilities };
export const SessionContext = createContext<Session | null>(null);

export function useSession(): Session {
  const s = useContext(SessionContext);
  if (!s) throw new Error("useSession outside a signed-in session");
  return s;
}

/** The message to show for anything a load or a submit threw. */
export function messageOf(e: unknown): string {
  if (e instanceof TypeError) return "The gateway could not be reached.";
  return e instanceof Error ? e.message : String(e);
}

export type Loaded<T> = {
  data: T | undefined;
  error: string | undefined;
  loading: boolean;
  reload: () => void;
};

/** Runs `load` when `key` changes (and on `reload`), keeping the last data while reloading. */
export function useLoad<T>(load: () => Promise<T>, key: string): Loaded<T> {
  const [state, setState] = useState<{ data?: T; error?: string; loading: boolean }>({ loading: true });
  const [tick, setTick] = useState(0);
  // `key` names everything `load` reads, so `load` itself is not a dependency.
  useEffect(() => {
    let live = true;
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (data) => live && setState({ data, loading: false }),
      (e: unknown) => live && setState({ error: messageOf(e), loading: false }),
    );
    return () => {
      live = false;
    };
  }, [key, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { data: state.data, error: state.error, loading: state.loading, reload };
}

export function ErrorBox({ message }: { message: string | undefined }) {
  if (!message) return null;
  return (
    <p class="error" role="alert">
      {message}
    </p>
  );
}

export function NotEnabled({ what }: { what: string }) {
  return (
    <section class="notice" aria-live="polite">
      <h2>{what}</h2>
      <p>{what} is not enabled on this deployment.</p>
    </section>
  );
}

export function Page(props: { title: string; actions?: ComponentChildren; children: ComponentChildren }) {
  return (
    <section aria-labelledby="page-title">
      <div class="page-head">
        <h1 id="page-title">{props.title}</h1>
        {props.actions ? <div class="actions">{props.actions}</div> : null}
      </div>
      {props.children}
    </section>
  );
}

/** Previous / next links for a `{limit, offset, total}` list, keeping the other query values. */
export function Pager(props: {
  path: string;
  query: Record<string, string | undefined>;
  limit: number;
  offset: number;
  total: number;
}) {
  const { limit, offset, total } = props;
  const first = total === 0 ? 0 : offset + 1;
  const last = Math.min(offset + limit, total);
  const prev = Math.max(0, offset - limit);
  return (
    <nav class="pager" aria-label="Pages">
      <span>
        {first}–{last} of {total}
      </span>
      {offset > 0 ? (
        <a href={href(props.path, { ...props.query, offset: prev || undefined })}>← Previous</a>
      ) : null}
      {offset + limit < total ? (
        <a href={href(props.path, { ...props.query, offset: offset + limit })}>Next →</a>
      ) : null}
    </nav>
  );
}

export function fmtTime(iso: string | null | undefined): string {
  if (!iso) return "—";
  const d = new Date(iso);
  return Number.isNaN(d.getTime())
    ? iso
    : d
        .toISOString()
        .replace("T", " ")
        .replace(/\.\d+Z$/, "Z");
}

export function fmtMs(ms: number | null | undefined): string {
  return ms === null || ms === undefined ? "—" : `${Math.round(ms * 10) / 10} ms`;
}

export function fmtBytes(n: number | null | undefined): string {
  if (n === null || n === undefined) return "—";
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

export function Status({ value }: { value: string }) {
  return <span class={`badge badge-${value}`}>{value}</span>;
}

/** A definition list of label → value rows, skipping nothing (null shows as —). */
export function Fields({ rows }: { rows: Array<[string, ComponentChildren]> }) {
  return (
    <dl class="fields">
      {rows.map(([k, v]) => (
        <div key={k}>
          <dt>{k}</dt>
          <dd>{v === null || v === undefined || v === "" ? "—" : v}</dd>
        </div>
      ))}
    </dl>
  );
}

/** Decodes base64 to text when it is UTF-8, else says how many bytes it holds. */
export function decodeBody(b64: string): string {
  const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return `(${bytes.length} bytes of binary data)`;
  }
}

/** Selected values from a form, trimmed; empty strings dropped. */
export function formValues(form: HTMLFormElement): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of new FormData(form)) {
    if (typeof v === "string" && v.trim() !== "") out[k] = v.trim();
  }
  return out;
}

/** Datetime-local input value (browser local time) ↔ RFC 3339 UTC. */
export function toRfc3339(local: string | undefined): string | undefined {
  if (!local) return undefined;
  const d = new Date(local);
  return Number.isNaN(d.getTime()) ? undefined : d.toISOString();
}

/**
 * A form-owned `<select>` starting at `initial`. Preact has no `defaultValue` for selects (it would
 * set an inert property), so the choice is held here; `key` it on `initial` to reset it.
 */
export function Picker(props: { name: string; initial: string; children: ComponentChildren; id?: string }) {
  const [value, setValue] = useState(props.initial);
  return (
    <select name={props.name} id={props.id} value={value} onChange={(e) => setValue(e.currentTarget.value)}>
      {props.children}
    </select>
  );
}
