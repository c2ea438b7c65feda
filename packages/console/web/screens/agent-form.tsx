import { useState } from "preact/hooks";
import { Options } from "../list/filter-bar.tsx";
import type { Agent } from "../types.ts";
import { ErrorBox, formValues, messageOf, Picker } from "../ui.tsx";
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
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);

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
        setBusy(true);
        setError(undefined);
        try {
          const body = bodyOf(formValues(form), checks, Boolean(a));
          // Per-tool prices have no form fields yet: an edit keeps them as they are.
          if (body.price && a?.price?.tools) body.price = { ...(body.price as Body), tools: a.price.tools };
          await props.onSubmit(body);
        } catch (err) {
          setError(messageOf(err));
        } finally {
          setBusy(false);
        }
      }}
    >
      <label>
        Name
        <input name="name" required maxLength={200} defaultValue={a?.name ?? ""} autoComplete="off" />
      </label>
      <label>
        Description
        <input name="description" maxLength={4000} defaultValue={a?.description ?? ""} autoComplete="off" />
      </label>
      {protocol === "mcp" && virtual ? null : (
        <label>
          Upstream URL
          <input
            name="upstream_url"
            type="url"
            placeholder="https://agent.example.com/"
            defaultValue={a?.upstream_url ?? ""}
            autoComplete="off"
          />
        </label>
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
        <label>
          Agent card URL
          <input
            name="card_url"
            type="url"
            placeholder="default: /.well-known/agent-card.json at the upstream's origin"
            defaultValue={a?.card_url ?? ""}
            autoComplete="off"
          />
        </label>
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
        <label>
          MCP protocol version
          <input
            name="mcp_protocol_version"
            placeholder="2025-06-18"
            defaultValue={a?.mcp_protocol_version ?? ""}
            autoComplete="off"
          />
        </label>
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
          <label>
            Requests per second
            <input
              name="rps"
              inputMode="decimal"
              defaultValue={a?.rate_limit ? String(a.rate_limit.rps) : ""}
              autoComplete="off"
            />
          </label>
          <label>
            Burst
            <input
              name="burst"
              inputMode="numeric"
              defaultValue={a?.rate_limit ? String(a.rate_limit.burst) : ""}
              autoComplete="off"
            />
          </label>
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
            <label>
              Amount (smallest unit)
              <input
                name="amount"
                inputMode="numeric"
                defaultValue={a?.price?.amount ?? ""}
                autoComplete="off"
              />
            </label>
            <label>
              Network
              <Picker name="network" initial={a?.price?.network ?? "base"}>
                <Options choices={NETWORKS} />
              </Picker>
            </label>
            <label class="grow">
              Pay to
              <input
                name="pay_to"
                placeholder="0x…"
                defaultValue={a?.price?.pay_to ?? ""}
                autoComplete="off"
              />
            </label>
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
