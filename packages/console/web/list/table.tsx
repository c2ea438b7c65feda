// The console's one table: a list of rows drawn column by column, in the scrolling wrapper every
// table sits in. The page around it (filters, pager) is in filter-bar.tsx and paged.tsx.
import type { ComponentChildren } from "preact";

/** A column: its heading and the cell it draws for a row. */
export type Column<T> = {
  head: ComponentChildren;
  cell: (row: T) => ComponentChildren;
  /** The class of the heading and of the cells (`num`, `opt`, `wide`), unless `cellClass` names theirs. */
  class?: string;
  cellClass?: string;
  /** `data-testid` of the cells. */
  testid?: string;
};

/** Attributes of a row: its `data-*` handles, `aria-current` for the row the page is about. */
export type RowProps = Record<string, string | undefined>;

/** The wrapper, the table and its headings; `children` are the body's rows. */
export function TableFrame(props: {
  columns: ReadonlyArray<Pick<Column<never>, "head" | "class">>;
  testid?: string | undefined;
  children: ComponentChildren;
}) {
  return (
    <div class="table-wrap">
      <table data-testid={props.testid}>
        <thead>
          <tr>
            {props.columns.map((c, i) => (
              <th key={i} scope="col" class={c.class}>
                {c.head}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>{props.children}</tbody>
      </table>
    </div>
  );
}

export type TableProps<T> = {
  columns: ReadonlyArray<Column<T>>;
  rows: readonly T[];
  rowKey: (row: T) => string;
  rowProps?: (row: T) => RowProps;
  testid?: string | undefined;
};

/** A row per item, a cell per column. */
export function Table<T>(props: TableProps<T>) {
  return (
    <TableFrame columns={props.columns} testid={props.testid}>
      {props.rows.map((r) => (
        <tr key={props.rowKey(r)} {...props.rowProps?.(r)}>
          {props.columns.map((c, i) => (
            <td key={i} class={c.cellClass ?? c.class} data-testid={c.testid}>
              {c.cell(r)}
            </td>
          ))}
        </tr>
      ))}
    </TableFrame>
  );
}

/** A cell's text with an id under it, small, to copy. */
export function WithId({ id, children }: { id: string; children: ComponentChildren }) {
  return (
    <>
      {children}
      <br />
      <code class="small">{id}</code>
    </>
  );
}
