import type { AgentProtocol } from "./agents.ts";

/**
 * What a protocol records of its calls beyond what every call has (docs/architecture.md, Adding a
 * protocol): the one declaration the invocation record is derived from. The column, the writer's
 * insert and completion, the poll, the list item and its OpenAPI schema, the list filters and the
 * console's invocation view all read it; a protocol module (packages/forward/src/protocols) names
 * its own list (`Protocol.recordedFields`) and fills the request-side fields (`Protocol.recorded`).
 * A new field needs its column in a migration (and an index when it is filterable, ADR 0042).
 */
export type RecordedField = {
  /** The API field and its column, snake_case (`a2a_task_id`); the record's key is its camelCase. */
  readonly name: string;
  /** The stored and served type: nullable text (the only kind so far). */
  readonly type: "text";
  /**
   * How it is learned: from the request (written with the record, never changed), from the answer
   * (the completion's value wins), or from the request else the answer (the request's value wins; a
   * completion fills it only when still null).
   */
  readonly from: "request" | "answer" | "request-or-answer";
  /** The console's label. */
  readonly label: string;
  /** The list filter that matches it exactly; fields sharing a filter are matched by any of them. */
  readonly filter?: RecordedFilter;
};

/** A `GET /v1/invocations` query parameter matching a recorded field exactly. */
export type RecordedFilter = {
  readonly param: string;
  /** Longer values (or a NUL) are a 400. */
  readonly maxBytes: number;
  /** OpenAPI's description of the parameter. */
  readonly description: string;
  /** The matching invocations read oldest first (a history) instead of newest first. */
  readonly oldestFirst?: boolean;
};

/** The JSON-RPC method, whatever the protocol: shared by MCP's and A2A's method fields. */
const METHOD_FILTER = {
  param: "method",
  maxBytes: 128,
  description:
    "Only calls of this JSON-RPC method, whatever the protocol: an MCP method (`mcp_method`, e.g. `tools/call`) or an A2A one (`a2a_method`, e.g. `SendMessage`). Exact match; at most 128 bytes, no NUL.",
} as const satisfies RecordedFilter;

/**
 * Each protocol's recorded fields, under a title (the console's section heading). Every protocol is
 * listed (the compiler insists), with no fields when it records nothing of its own.
 */
export const RECORDED = {
  http: { title: "HTTP call", fields: [] },
  mcp: {
    title: "MCP call",
    fields: [
      { name: "mcp_method", type: "text", from: "request", label: "MCP method", filter: METHOD_FILTER },
      {
        name: "mcp_tool",
        type: "text",
        from: "request",
        label: "MCP tool",
        filter: {
          param: "tool",
          maxBytes: 256,
          description:
            "Only calls of this MCP tool (`mcp_tool`: `params.name` of a `tools/call`, as the caller named it). Exact match; at most 256 bytes, no NUL.",
        },
      },
      {
        // docs/mcp.md, Tasks: `params.taskId` of a tasks/* request, else the task a task-augmented
        // tools/call's answer created (`result.task.taskId`).
        name: "mcp_task_id",
        type: "text",
        from: "request-or-answer",
        label: "MCP task",
        filter: {
          param: "mcp_task_id",
          // packages/mcp's MCP_TASK_ID_MAX_BYTES: a virtual server's signed task ids are long.
          maxBytes: 1024,
          description:
            "Every invocation of this MCP task (`mcp_task_id`: the task a task-augmented `tools/call` created, or the `params.taskId` of a `tasks/*` call; docs/mcp.md, Tasks), oldest first instead of newest first. Exact match; at most 1024 bytes, no NUL.",
          oldestFirst: true,
        },
      },
      // The last task status the answer carried (`working`, `input_required`, `completed`, ...).
      { name: "mcp_task_status", type: "text", from: "answer", label: "MCP task status" },
    ],
  },
  a2a: {
    title: "A2A task",
    fields: [
      // docs/a2a.md: the JSON-RPC method as sent.
      { name: "a2a_method", type: "text", from: "request", label: "Method", filter: METHOD_FILTER },
      {
        name: "a2a_task_id",
        type: "text",
        from: "request-or-answer",
        label: "Task",
        filter: {
          param: "a2a_task_id",
          maxBytes: 256,
          description:
            "Every invocation of this A2A task (docs/a2a.md), oldest first instead of newest first.",
          oldestFirst: true,
        },
      },
      { name: "a2a_context_id", type: "text", from: "request-or-answer", label: "Context" },
      // The last task state the answer carried (`TASK_STATE_COMPLETED`, v0.3 `completed`, ...).
      { name: "a2a_task_state", type: "text", from: "answer", label: "Task state" },
    ],
  },
} as const satisfies Record<
  AgentProtocol,
  { readonly title: string; readonly fields: readonly RecordedField[] }
>;

type Declared = (typeof RECORDED)[AgentProtocol]["fields"][number];
/** `a2a_task_id` → `a2aTaskId`. */
type Camel<S extends string> = S extends `${infer H}_${infer T}` ? `${H}${Capitalize<Camel<T>>}` : S;

/** A recorded field's API and column name. */
export type RecordedName = Declared["name"];
/** A recorded field's key in the invocation record (`InvocationRow`). */
export type RecordedKey = Camel<RecordedName>;
/** The keys of the fields a protocol learns from the request (`Protocol.recorded` fills them). */
export type RequestRecordedKey = Camel<Extract<Declared, { from: "request" | "request-or-answer" }>["name"]>;
/** The query parameters of the recorded fields' list filters. */
export type RecordedParam = Extract<Declared, { filter: RecordedFilter }>["filter"]["param"];

/** A declared field with its record key, its protocol and its section. */
export type RecordedEntry = RecordedField & {
  readonly name: RecordedName;
  readonly key: RecordedKey;
  readonly protocol: AgentProtocol;
};

const camel = (s: string) => s.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase()) as RecordedKey;

/** Every recorded field of every protocol, in protocol order then declaration order. */
export const RECORDED_FIELDS: readonly RecordedEntry[] = Object.entries(RECORDED).flatMap(([protocol, p]) =>
  (p.fields as readonly (RecordedField & { name: RecordedName })[]).map((f) => ({
    ...f,
    key: camel(f.name),
    protocol: protocol as AgentProtocol,
  })),
);

/** Each list filter once (by its parameter), with the fields it matches (any of them). */
export const RECORDED_FILTERS: ReadonlyArray<
  RecordedFilter & { readonly param: RecordedParam; readonly fields: readonly RecordedEntry[] }
> = [
  ...new Map(
    RECORDED_FIELDS.flatMap((f) => (f.filter ? [[f.filter.param, f.filter] as const] : [])),
  ).values(),
].map((filter) => ({
  ...filter,
  param: filter.param as RecordedParam,
  fields: RECORDED_FIELDS.filter((f) => f.filter?.param === filter.param),
}));
