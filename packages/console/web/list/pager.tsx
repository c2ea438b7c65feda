import { href } from "../router.ts";

/** Query values a list keeps from page to page (its filters). */
export type Query = Record<string, string | undefined>;

/** Previous / next links for a `{limit, offset, total}` list, keeping the other query values. */
export function Pager(props: { path: string; query: Query; limit: number; offset: number; total: number }) {
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
