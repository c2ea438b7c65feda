// The lists of the console: one table, one filter bar, one pager, and the paged list that puts
// them together with the API's `{data, limit, offset, total}` pages.
export {
  type Choices,
  FilterBar,
  FilterPicker,
  FilterSelect,
  FilterText,
  Options,
  TimeRange,
} from "./filter-bar.tsx";
export { filtersOf, PAGE_SIZE, PagedTable, usePage } from "./paged.tsx";
export { Pager, type Query } from "./pager.tsx";
export { type Column, type RowProps, Table, TableFrame, type TableProps, WithId } from "./table.tsx";
