// A paged list of the API (`{data, limit, offset, total}`): the page the URL's `offset` names, drawn
// as a table with the line shown when nothing matches and the pager.
import type { ComponentChildren } from "preact";
import { useRoute } from "../router.ts";
import type { List } from "../types.ts";
import { ErrorBox, type Loaded, useLoad } from "../ui.tsx";
import { Pager, type Query } from "./pager.tsx";
import { Table, type TableProps } from "./table.tsx";

/** Rows a list screen asks for at once. */
export const PAGE_SIZE = 20;

/** Loads the page the URL's `offset` names, again when `key` (the filters) or the offset changes. */
export function usePage<L extends List<unknown>>(
  load: (page: { offset: number; limit: number }) => Promise<L>,
  key: string,
): Loaded<L> {
  const route = useRoute();
  const offset = Number(route.query.get("offset") ?? 0) || 0;
  return useLoad(() => load({ offset, limit: PAGE_SIZE }), `${key}|${offset}`);
}

/** The list's error, or its page: the table, `empty` when it has no rows at all, the pager. */
export function PagedTable<T>(
  props: Omit<TableProps<T>, "rows"> & {
    list: Loaded<List<T>>;
    /** Another failure to show in the list's place (an action on a row). */
    error?: string | undefined;
    empty: ComponentChildren;
    path: string;
    query: Query;
  },
) {
  const { list, error, empty, path, query, ...table } = props;
  return (
    <>
      <ErrorBox message={list.error ?? error} />
      {list.data ? (
        <>
          <Table {...table} rows={list.data.data} />
          {list.data.total === 0 ? <p class="empty">{empty}</p> : null}
          <Pager path={path} query={query} {...list.data} />
        </>
      ) : null}
    </>
  );
}

/** The URL's values of the `names` filters, those it carries and not empty. */
export function filtersOf<K extends string>(
  query: URLSearchParams,
  names: readonly K[],
): Partial<Record<K, string>> {
  const out: Partial<Record<K, string>> = {};
  for (const k of names) {
    const v = query.get(k);
    if (v) out[k] = v;
  }
  return out;
}
