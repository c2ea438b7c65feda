import { href } from "./router.ts";

/**
 * The parts every list's filter form ends with: the time range and the Apply / reset buttons.
 * The range reads and writes RFC 3339 in the URL and local time in the inputs.
 */

/** An RFC 3339 instant as a datetime-local value (local time, minutes); "" when absent or invalid. */
export function toLocalInput(iso: string | null | undefined): string {
  if (!iso) return "";
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return "";
  return new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
}

/** Since and Until, filled from the URL's filter. */
export function TimeRange({
  since,
  until,
}: {
  since: string | null | undefined;
  until: string | null | undefined;
}) {
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

/** Apply, and a link back to `path` with no filter (labelled `reset`, "Clear" by default). */
export function FilterButtons({ path, reset = "Clear" }: { path: string; reset?: string }) {
  return (
    <div class="filter-buttons">
      <button type="submit">Apply</button>
      <a class="button secondary" href={href(path)}>
        {reset}
      </a>
    </div>
  );
}
