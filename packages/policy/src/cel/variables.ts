import type { PolicyInput } from "../input.ts";
import type { CelVariables } from "./env.ts";
import { celArgumentsOf, celValueOf } from "./values.ts";

/** One call's condition variables, built on the first condition evaluated and shared by the rest. */
export type CallVariables = {
  /** The variables; throws (→ `on_error`) when what the condition reads is out of bounds. */
  forCondition: (readsArguments: boolean) => CelVariables;
};

const EMPTY = new Map<string, unknown>();
/** Claims are converted once per principal (the verifier caches principals per token). */
const claimsOf = new WeakMap<object, Map<string, unknown> | Error>();

/**
 * The variables of docs/policy.md "Conditions", every one always present. Arguments are converted
 * only when a condition reads them; a call whose arguments are not an object, too deep or too
 * large leaves them unreadable: conditions that read them cannot be evaluated, the others run
 * with `call.arguments` empty.
 */
export function callVariables(input: PolicyInput): CallVariables {
  const claims = claimsFor(input.principal.claims);
  const isToolCall = input.rpcMethod === "tools/call";
  const base = {
    principal: {
      sub: input.principal.sub,
      tenant: input.tenantId,
      scopes: input.principal.scopes,
      claims: claims instanceof Error ? EMPTY : claims,
    },
    agent: { id: input.agentId, name: input.agentName, protocol: input.protocol },
    call: {
      mode: input.mode,
      method: input.rpcMethod ?? "",
      tool: input.mcpTool ?? "",
      arguments: EMPTY,
      model: input.model ?? "",
      body_bytes: input.bodySize === null ? -1n : BigInt(input.bodySize),
      price: input.price ? new Map(Object.entries(input.price)) : null,
    },
    // The tool catalog's view of the called tool (docs/tools.md); "unknown" when never seen.
    tool: {
      status: isToolCall ? (input.toolStatus ?? "unknown") : "",
      digest: isToolCall ? (input.toolDigest ?? "") : "",
    },
    now: new Date(),
  } satisfies CelVariables;
  let withArguments: CelVariables | Error | null = null;
  return {
    forCondition: (readsArguments) => {
      if (claims instanceof Error) throw claims;
      if (!readsArguments) return base;
      if (withArguments === null) {
        try {
          withArguments = { ...base, call: { ...base.call, arguments: celArgumentsOf(input.arguments) } };
        } catch (e) {
          withArguments = e instanceof Error ? e : new Error("arguments out of bounds");
        }
      }
      if (withArguments instanceof Error) throw withArguments;
      return withArguments;
    },
  };
}

/**
 * Why no condition or key of this call can be evaluated (its claims are out of bounds), or null:
 * what `forCondition` throws first, for a key evaluated without the variables (direct-key.ts).
 */
export function unreadableClaims(input: PolicyInput): Error | null {
  const claims = claimsFor(input.principal.claims);
  return claims instanceof Error ? claims : null;
}

/** The call's claims as CEL sees them (a map), or why they cannot be read. */
export function claimsOfInput(input: PolicyInput): Map<string, unknown> | Error {
  return claimsFor(input.principal.claims);
}

function claimsFor(claims: Readonly<Record<string, unknown>>): Map<string, unknown> | Error {
  let hit = claimsOf.get(claims);
  if (hit === undefined) {
    try {
      hit = celValueOf(claims) as Map<string, unknown>;
    } catch (e) {
      hit = e instanceof Error ? e : new Error("claims out of bounds");
    }
    claimsOf.set(claims, hit);
  }
  return hit;
}
