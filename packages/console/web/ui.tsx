// Small shared pieces: data loading, error and "not enabled" notices, formatting. Lists (table,
// filter bar, pager) are in list/.
import type { ComponentChildren } from "preact";
import { createContext } from "preact";
import { useCallback, useContext, useEffect, useState } from "preact/hooks";
import type { Api } from "./api.ts";
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

/**
 * A write a form or a button makes: `run(fn)` clears the last failure, runs `fn` (`busy` meanwhile)
 * and keeps the message of what it threw; it answers whether `fn` went through.
 */
export function useAction() {
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const run = async (fn: () => Promise<unknown>): Promise<boolean> => {
    setBusy(true);
    setError(undefined);
    try {
      await fn();
      return true;
    } catch (e) {
      setError(messageOf(e));
      return false;
    } finally {
      setBusy(false);
    }
  };
  return { error, busy, run };
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

/** What failed, read out at once; nothing without a message. */
export function ErrorBox({ message }: { message: string | undefined }) {
  return <Line class="error" role="alert" message={message} />;
}

export function NotEnabled({ what }: { what: string }) {
  return (
    <section class="notice" aria-live="polite">
      <h2>{what}</h2>
      <p>{what} is not enabled on this deployment.</p>
    </section>
  );
}

/** A screen: its title, the actions beside it (`refresh`: a Refresh button that calls it), its body. */
export function Page(props: {
  title: string;
  actions?: ComponentChildren;
  refresh?: () => void;
  children: ComponentChildren;
}) {
  const actions = props.refresh ? <RefreshButton onClick={props.refresh} /> : props.actions;
  return (
    <section aria-labelledby="page-title">
      <div class="page-head">
        <h1 id="page-title">{props.title}</h1>
        {actions ? <div class="actions">{actions}</div> : null}
      </div>
      {props.children}
    </section>
  );
}

export function RefreshButton({ onClick }: { onClick: () => void }) {
  return (
    <button type="button" class="secondary" onClick={onClick}>
      Refresh
    </button>
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

/**
 * A Delete button that asks once more: Confirm delete runs `onConfirm` (asking again unless it
 * answers true: done), Keep takes the question back.
 */
export function ConfirmDelete(props: { label: string; busy?: boolean; onConfirm: () => Promise<unknown> }) {
  const [asking, setAsking] = useState(false);
  if (!asking) {
    return (
      <button type="button" class="danger" onClick={() => setAsking(true)}>
        {props.label}
      </button>
    );
  }
  return (
    <>
      <button
        type="button"
        class="danger"
        disabled={props.busy}
        onClick={async () => {
          if ((await props.onConfirm()) === true) setAsking(false);
        }}
      >
        Confirm delete
      </button>
      <button type="button" class="secondary" onClick={() => setAsking(false)}>
        Keep
      </button>
    </>
  );
}

/** A line saying a write went through (`message`), read out when it appears. */
export function Done({ message }: { message: string | undefined }) {
  return <Line class="ok" role="status" message={message} />;
}

function Line(props: { class: string; role: "alert" | "status"; message: string | undefined }) {
  if (!props.message) return null;
  return (
    <p class={props.class} role={props.role}>
      {props.message}
    </p>
  );
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

/** A form's text field, filled with the stored `value` (empty when there is none). */
export function TextField(props: {
  label: string;
  name: string;
  value: string | null | undefined;
  type?: "url";
  placeholder?: string;
  inputMode?: "decimal" | "numeric";
  required?: boolean;
  maxLength?: number;
  grow?: boolean;
}) {
  return (
    <label class={props.grow ? "grow" : undefined}>
      {props.label}
      <input
        name={props.name}
        type={props.type}
        required={props.required}
        maxLength={props.maxLength}
        inputMode={props.inputMode}
        placeholder={props.placeholder}
        defaultValue={props.value ?? ""}
        autoComplete="off"
      />
    </label>
  );
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
