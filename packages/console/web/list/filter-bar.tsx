// The console's one filter bar: a list's filters as a form above it. A bar with a `path` applies
// its form by navigating there (the filters live in the URL, so a reload keeps them); a bar of
// selects alone applies each choice as it is made.
import type { ComponentChildren } from "preact";
import { href, navigate } from "../router.ts";
import { formValues, Picker } from "../ui.tsx";

/** The choices of a select: a value that is its own label, or `[value, label]`. */
export type Choices = ReadonlyArray<string | readonly [value: string, label: string]>;

export function Options({ choices }: { choices: Choices }) {
  return (
    <>
      {choices.map((c) => {
        const [value, label] = typeof c === "string" ? [c, c] : c;
        return (
          <option key={value} value={value}>
            {label}
          </option>
        );
      })}
    </>
  );
}

/**
 * The form. With `path`, Apply navigates there with the form's values (the time range in RFC 3339)
 * and a link labelled `reset` ("Clear") goes back to `path` with none; with `onApply`, the button
 * labelled `apply` hands the values over; with neither, the fields act as they change.
 */
export function FilterBar(props: {
  label?: string;
  path?: string;
  reset?: string;
  onApply?: (values: Record<string, string>) => void;
  apply?: string;
  children: ComponentChildren;
}) {
  const { path, onApply } = props;
  return (
    <form
      class="filters"
      aria-label={props.label}
      onSubmit={(e) => {
        e.preventDefault();
        const v = formValues(e.currentTarget);
        if (path) navigate(path, { ...v, since: toRfc3339(v.since), until: toRfc3339(v.until) });
        else onApply?.(v);
      }}
    >
      {props.children}
      {path || onApply ? (
        <div class="filter-buttons">
          <button type="submit">{props.apply ?? "Apply"}</button>
          {path ? (
            <a class="button secondary" href={href(path)}>
              {props.reset ?? "Clear"}
            </a>
          ) : null}
        </div>
      ) : null}
    </form>
  );
}

/**
 * A select the form reads on Apply, starting at the URL's `value`; `any` adds the choice of no
 * filter. It starts again when `value` or `remount` changes (`remount`: its choices arrived).
 */
export function FilterPicker(props: {
  label: string;
  name: string;
  value: string | undefined;
  choices: Choices;
  any?: boolean;
  remount?: string | number | undefined;
}) {
  return (
    <label>
      {props.label}
      <Picker name={props.name} initial={props.value ?? ""} key={`${props.value}|${props.remount}`}>
        {props.any ? <option value="">any</option> : null}
        <Options choices={props.choices} />
      </Picker>
    </label>
  );
}

/** A text filter the form reads on Apply, showing the URL's `value` (again when it changes). */
export function FilterText(props: {
  label: string;
  name: string;
  value: string | undefined;
  placeholder?: string;
}) {
  return (
    <label>
      {props.label}
      <input
        type="text"
        name={props.name}
        defaultValue={props.value ?? ""}
        key={props.value}
        placeholder={props.placeholder}
      />
    </label>
  );
}

/** A select that applies its choice at once (`onChange`); `any` labels the choice of no filter. */
export function FilterSelect(props: {
  label: string;
  value: string;
  choices: Choices;
  any?: string;
  onChange: (value: string) => void;
}) {
  return (
    <label>
      {props.label}
      <select value={props.value} onChange={(e) => props.onChange(e.currentTarget.value)}>
        {props.any === undefined ? null : <option value="">{props.any}</option>}
        <Options choices={props.choices} />
      </select>
    </label>
  );
}

/** Since and Until, filled from the URL's filter (RFC 3339 there, local time in the inputs). */
export function TimeRange({ since, until }: { since: string | undefined; until: string | undefined }) {
  return (
    <>
      <label>
        Since
        <input type="datetime-local" name="since" defaultValue={toLocalInput(since)} />
      </label>
      <label>
        Until
        <input type="datetime-local" name="until" defaultValue={toLocalInput(until)} />
      </label>
    </>
  );
}

/** An RFC 3339 instant as a datetime-local value (local time, minutes); "" when absent or invalid. */
export function toLocalInput(iso: string | null | undefined): string {
  if (!iso) return "";
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return "";
  return new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
}

/** Datetime-local input value (browser local time) → RFC 3339 UTC. */
export function toRfc3339(local: string | undefined): string | undefined {
  if (!local) return undefined;
  const d = new Date(local);
  return Number.isNaN(d.getTime()) ? undefined : d.toISOString();
}
