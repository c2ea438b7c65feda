import { useState } from "preact/hooks";
import { Options } from "../list/index.ts";
import type { Agent } from "../types.ts";
import { ErrorBox, formValues, Picker, TextField, useAction } from "../ui.tsx";
import { CredentialField } from "./credential-field.tsx";
import { type Member, MembersField } from "./members-field.tsx";
import { NETWORKS, type ToolPrice, ToolPricesField } from "./tool-prices-field.tsx";

type Body = Record<string, unknown>;

/**
 * The agent write body from the form. On create, empty fields are left out; on edit they are sent
 * as null, which clears them (PATCH semantics, docs/interface.md). Validation is the server's: a
 * number that does not parse goes out as null and comes back as the API's own error message.
 */
function bodyOf(
  v: Record<string, string>,
  checks: {
    capture: boolean;
    priced: boolean;
    members: Member[] | null;
    search: boolean;
    toolPrices: ToolPrice[] | null;
  },
  editing: boolean,
): Body {
  const orNull = (x: string | undefined) => (x === undefined ? (editing ? null : undefined) : x);
  const body: Body = {
    name: v.name ?? "",
    description: orNull(v.description),
    upstream_url: orNull(v.upstream_url),
    protocol: v.protocol ?? "http",
    credential_ref: orNull(v.credential_ref),
    capture_bodies: checks.capture,
  };
  // A virtual MCP server has members instead of an upstream and a credential of its own.
  if (checks.members !== null) {
    body.members = checks.members;
    // How its tools/list answers: every member tool, or search_tools and call_tool (docs/mcp.md).
    body.tool_discovery = checks.search ? "search" : "list";
    body.upstream_url = editing ? null : undefined;
    body.credential_ref = editing ? null : undefined;
  } else if (editing) body.members = null;
  if (body.protocol === "mcp") {
    body.mcp_transport = "streamable_http";
    body.mcp_protocol_version = orNull(v.mcp_protocol_version);
  } else if (editing) {
    body.mcp_transport = null;
    body.mcp_protocol_version = null;
  }
  // Per-tool prices are an MCP agent's (docs/payments.md, MCP tool calls); none clears them.
  if (checks.toolPrices !== null && checks.toolPrices.length > 0) body.tool_prices = checks.toolPrices;
  else if (editing) body.tool_prices = null;
  // An A2A agent's card, when it is not at the origin of its upstream (docs/a2a.md).
  if (body.protocol === "a2a") body.card_url = orNull(v.card_url);
  else if (editing) body.card_url = null;
  if (checks.priced) {
    body.price = {
      amount: v.amount ?? "",
      asset: "USDC",
      network: v.network ?? "base",
      pay_to: v.pay_to ?? "",
    };
  } else if (editing) body.price = null;
  if (v.rps !== undefined || v.burst !== undefined) {
    body.rate_limit = { rps: Number(v.rps ?? Number.NaN), burst: Number(v.burst ?? Number.NaN) };
  } else if (editing) body.rate_limit = null;
  for (const k of Object.keys(body)) if (body[k] === undefined) delete body[k];
  return body;
}

export function AgentForm(props: {
  agent?: Agent;
  submitLabel: string;
  onSubmit: (body: Body) => Promise<void>;
  onCancel?: () => void;
}) {
  const a = props.agent;
  const [protocol, setProtocol] = useState<string>(a?.protocol ?? "http");
  const [priced, setPriced] = useState(Boolean(a?.price));
  const [virtual, setVirtual] = useState(Boolean(a?.members));
  const [members, setMembers] = useState<Member[]>(a?.members ?? []);
  const [search, setSearch] = useState(a?.tool_discovery === "search");
  const [toolPrices, setToolPrices] = useState<ToolPrice[]>(a?.tool_prices ?? []);
  const { error, busy, run } = useAction();

  return (
    <form
      class="form"
      aria-label={props.submitLabel}
      onSubmit={async (e) => {
        e.preventDefault();
        const form = e.currentTarget;
        const checks = {
          capture: (form.elements.namedItem("capture_bodies") as HTMLInputElement).checked,
          priced,
          members: protocol === "mcp" && virtual ? members : null,
          search,
          toolPrices: protocol === "mcp" ? toolPrices : null,
        };
        await run(async () => {
          const body = bodyOf(formValues(form), checks, Boolean(a));
          // Per-tool prices have no form fields yet: an edit keeps them as they are.
          if (body.price && a?.price?.tools) body.price = { ...(body.price as Body), tools: a.price.tools };
          await props.onSubmit(body);
        });
      }}
    >
      <TextField label="Name" name="name" value={a?.name} required maxLength={200} />
      <TextField label="Description" name="description" value={a?.description} maxLength={4000} />
      {protocol === "mcp" && virtual ? null : (
        <TextField
          label="Upstream URL"
          name="upstream_url"
          value={a?.upstream_url}
          type="url"
          placeholder="https://agent.example.com/"
        />
      )}
      <label>
        Protocol
        <select name="protocol" value={protocol} onChange={(e) => setProtocol(e.currentTarget.value)}>
          <option value="http">http</option>
          <option value="mcp">mcp (Streamable HTTP)</option>
          <option value="a2a">a2a (A2A JSON-RPC)</option>
        </select>
      </label>
      {protocol === "a2a" ? (
        <TextField
          label="Agent card URL"
          name="card_url"
          value={a?.card_url}
          type="url"
          placeholder="default: /.well-known/agent-card.json at the upstream's origin"
        />
      ) : null}
      {protocol === "mcp" ? (
        <label class="check">
          <input type="checkbox" checked={virtual} onChange={(e) => setVirtual(e.currentTarget.checked)} />
          Virtual MCP server: several MCP agents behind this one
        </label>
      ) : null}
      {protocol === "mcp" && virtual ? (
        <MembersField {...(a ? { selfId: a.id } : {})} initial={members} onChange={setMembers} />
      ) : null}
      {protocol === "mcp" && virtual ? (
        <label class="check">
          <input
            type="checkbox"
            name="tool_search"
            checked={search}
            onChange={(e) => setSearch(e.currentTarget.checked)}
          />
          Tool search: list only search_tools and call_tool instead of every member tool (for hundreds of
          tools)
        </label>
      ) : null}
      {protocol === "mcp" && !virtual ? (
        <TextField
          label="MCP protocol version"
          name="mcp_protocol_version"
          value={a?.mcp_protocol_version}
          placeholder="2025-06-18"
        />
      ) : null}
      <CredentialField
        label="Credential"
        name="credential_ref"
        initial={a?.credential_ref}
        keepUnknown
        hidden={protocol === "mcp" && virtual}
      />
      <label class="check">
        <input type="checkbox" name="capture_bodies" defaultChecked={a?.capture_bodies ?? false} />
        Capture request and response bodies (first 1 MiB)
      </label>
      <fieldset>
        <legend>Rate limit (empty: deployment default)</legend>
        <div class="row">
          <TextField
            label="Requests per second"
            name="rps"
            value={a?.rate_limit ? String(a.rate_limit.rps) : ""}
            inputMode="decimal"
          />
          <TextField
            label="Burst"
            name="burst"
            value={a?.rate_limit ? String(a.rate_limit.burst) : ""}
            inputMode="numeric"
          />
        </div>
      </fieldset>
      <fieldset>
        <legend>Price (x402)</legend>
        <label class="check">
          <input type="checkbox" checked={priced} onChange={(e) => setPriced(e.currentTarget.checked)} />
          Priced: callers pay per call in USDC (with tool prices: their defaults only)
        </label>
        {priced ? (
          <div class="row">
            <TextField
              label="Amount (smallest unit)"
              name="amount"
              value={a?.price?.amount}
              inputMode="numeric"
            />
            <label>
              Network
              <Picker name="network" initial={a?.price?.network ?? "base"}>
                <Options choices={NETWORKS} />
              </Picker>
            </label>
            <TextField label="Pay to" name="pay_to" value={a?.price?.pay_to} placeholder="0x…" grow />
          </div>
        ) : null}
      </fieldset>
      {protocol === "mcp" ? <ToolPricesField initial={toolPrices} onChange={setToolPrices} /> : null}
      <ErrorBox message={error} />
      <div class="actions">
        <button type="submit" disabled={busy}>
          {props.submitLabel}
        </button>
        {props.onCancel ? (
          <button type="button" class="secondary" onClick={props.onCancel}>
            Cancel
          </button>
        ) : null}
      </div>
    </form>
  );
}
