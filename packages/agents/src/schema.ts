import { LIMITS } from "@gw/core";
import { AGENT_PROTOCOLS, TOOL_DISCOVERY_MODES } from "@gw/db";
import * as v from "valibot";

const MAX_UINT256 = (1n << 256n) - 1n;

/**
 * Smallest-unit decimal amount within 256 bits. abortPipeEarly: valibot otherwise runs the range
 * check after a failed regex, and `BigInt("1.5")` would throw out of the parse (a 500, not a 400).
 */
export const Amount = v.config(
  v.pipe(
    v.string("must be a decimal string"),
    v.regex(/^[0-9]{1,78}$/, "must be a decimal string of digits"),
    v.check((s) => BigInt(s) <= MAX_UINT256, "must fit in 256 bits"),
  ),
  { abortPipeEarly: true },
);

export const Price = v.strictObject(
  {
    amount: Amount,
    asset: v.literal("USDC", 'must be "USDC"'),
    network: v.picklist(["base", "base-sepolia"], 'must be "base" or "base-sepolia"'),
    pay_to: v.pipe(v.string(), v.regex(/^0x[0-9a-fA-F]{40}$/, "must be a 0x-prefixed 20-byte hex address")),
    tools: v.optional(v.record(v.pipe(v.string(), v.minLength(1), v.maxLength(256)), Amount)),
  },
  "unknown field in price",
);

export const RateLimit = v.strictObject({
  rps: v.pipe(v.number("must be a number"), v.minValue(0.001, "must be positive"), v.maxValue(1_000_000)),
  burst: v.pipe(
    v.number("must be a number"),
    v.integer("must be an integer"),
    v.minValue(1),
    v.maxValue(1_000_000),
  ),
});

/** Calls in flight per proxy replica; null → GW_AGENT_MAX_CONCURRENCY. */
export const MaxConcurrency = v.pipe(
  v.number("must be a number"),
  v.integer("must be an integer"),
  v.minValue(1, "must be at least 1"),
  v.maxValue(1_000_000, "must be at most 1000000"),
);

const Name = v.pipe(
  v.string("must be a string"),
  v.trim(),
  v.minLength(1, "must not be empty"),
  v.maxLength(200),
);
const Description = v.pipe(v.string("must be a string"), v.maxLength(4000));
const Url = v.pipe(v.string("must be a string"), v.maxLength(2048));
const Protocol = v.picklist(
  AGENT_PROTOCOLS,
  `must be one of ${AGENT_PROTOCOLS.map((p) => `"${p}"`).join(", ")}`,
);
const Transport = v.string("must be a string");
const ProtocolVersion = v.pipe(
  v.string(),
  v.regex(/^[\w.-]{1,32}$/, "must be a protocol version like 2025-06-18"),
);
const Ref = v.pipe(v.string("must be a string"), v.minLength(1), v.maxLength(64));

/** A tool-name pattern: an exact name, or a prefix followed by one trailing `*`. */
const ToolPattern = v.pipe(
  v.string("must be a string"),
  v.minLength(1, "must not be empty"),
  v.maxLength(256, "must be at most 256 characters"),
  v.regex(/^[^*]*\*?$/, "must be a tool name, optionally ending in one trailing *"),
);
const Patterns = v.pipe(v.array(ToolPattern, "must be a list of tool-name patterns"), v.maxLength(64));

/** The networks a price may name, in either spelling (docs/payments.md). */
const NETWORK_NAMES = ["base", "base-sepolia", "eip155:8453", "eip155:84532"] as const;
const Address = v.pipe(
  v.string(),
  v.regex(/^0x[0-9a-fA-F]{40}$/, "must be a 0x-prefixed 20-byte hex address"),
);

/**
 * One per-tool price of an MCP agent (docs/payments.md, MCP tool calls). Fields left out come from
 * the agent's `price`; the cross-field rules (a payee, an asset of the network) are the agents
 * verbs'.
 */
export const ToolPrice = v.strictObject(
  {
    tool: ToolPattern,
    amount: Amount,
    asset: v.optional(v.union([v.literal("USDC"), Address], 'must be "USDC" or the USDC contract address')),
    network: v.optional(v.picklist(NETWORK_NAMES, 'must be "base", "base-sepolia" or their CAIP-2 ids')),
    pay_to: v.optional(Address),
    description: v.optional(v.pipe(v.string("must be a string"), v.maxLength(1000))),
  },
  "unknown field in tool price",
);

/** An MCP agent's per-tool prices, in order (first match wins). */
export const ToolPrices = v.pipe(
  v.array(ToolPrice, "must be a list of tool prices"),
  v.minLength(1, "must name at least one tool"),
  v.maxLength(LIMITS.toolPricesMax, `must name at most ${LIMITS.toolPricesMax} tools`),
);

/** One member of a virtual MCP server (docs/mcp.md, Virtual MCP servers). */
export const Member = v.strictObject(
  {
    agent_id: v.pipe(v.string("must be a string"), v.minLength(1), v.maxLength(64)),
    prefix: v.pipe(
      v.string("must be a string"),
      v.regex(/^(?:[a-z0-9][a-z0-9-]{0,31})?$/, 'must match ^[a-z0-9][a-z0-9-]{0,31}$ or be ""'),
    ),
    include: v.optional(Patterns),
    exclude: v.optional(Patterns),
  },
  "unknown field in member",
);

/** A virtual MCP server's members, in order: 1 to LIMITS.virtualMembersMax. */
const Members = v.pipe(
  v.array(Member, "must be a list of members"),
  v.minLength(1, "must name at least one member"),
  v.maxLength(LIMITS.virtualMembersMax, `must name at most ${LIMITS.virtualMembersMax} members`),
);

/** Every writable field. Create: name required. Patch: everything optional, null clears. */
const fields = {
  description: v.nullish(Description),
  upstream_url: v.nullish(Url),
  protocol: v.optional(Protocol),
  mcp_transport: v.nullish(Transport),
  mcp_protocol_version: v.nullish(ProtocolVersion),
  credential_ref: v.nullish(Ref),
  price: v.nullish(Price),
  /** An MCP agent's per-tool prices (docs/payments.md, MCP tool calls); null clears. */
  tool_prices: v.nullish(ToolPrices),
  status: v.optional(v.picklist(["active", "inactive"], 'must be "active" or "inactive"')),
  suspended: v.optional(v.boolean("must be a boolean")),
  rate_limit: v.nullish(RateLimit),
  max_concurrency: v.nullish(MaxConcurrency),
  capture_bodies: v.optional(v.boolean("must be a boolean")),
  emit_receipts: v.nullish(v.boolean("must be a boolean")),
  members: v.nullish(Members),
  /** A virtual MCP server's tools/list: every tool, or search_tools and call_tool (docs/mcp.md). */
  tool_discovery: v.optional(v.picklist(TOOL_DISCOVERY_MODES, 'must be "list" or "search"')),
  /** An A2A agent's card when not at the origin of upstream_url (docs/a2a.md). */
  card_url: v.nullish(Url),
};

export const CreateAgent = v.strictObject({ name: Name, ...fields });
export const PatchAgent = v.strictObject({ name: v.optional(Name), ...fields });

export type CreateAgentInput = v.InferOutput<typeof CreateAgent>;
export type PatchAgentInput = v.InferOutput<typeof PatchAgent>;
