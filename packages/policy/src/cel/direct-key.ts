import type { ASTNode } from "@marcbachmann/cel-js";
import type { PolicyInput } from "../input.ts";

/**
 * The call fields that are strings on every call, read as `callVariables` gives them to CEL
 * (cel/variables.ts: keep the two in step).
 */
const FIELDS: Readonly<Record<string, Readonly<Record<string, (input: PolicyInput) => string>>>> = {
  principal: { sub: (i) => i.principal.sub, tenant: (i) => i.tenantId },
  agent: { id: (i) => i.agentId, name: (i) => i.agentName, protocol: (i) => i.protocol },
  call: {
    mode: (i) => i.mode,
    method: (i) => i.rpcMethod ?? "",
    tool: (i) => i.mcpTool ?? "",
    model: (i) => i.model ?? "",
  },
};

type Node = { op: string; args: unknown };

/** The reader of `id.name` when it is one of FIELDS (a string on every call); else null. */
export function stringField(node: { op: string; args: unknown }): ((input: PolicyInput) => string) | null {
  if (node.op !== "." || !Array.isArray(node.args)) return null;
  const [of, name] = node.args as [Node, unknown];
  if (of?.op !== "id" || typeof of.args !== "string" || typeof name !== "string") return null;
  return Object.hasOwn(FIELDS, of.args) && Object.hasOwn(FIELDS[of.args] ?? {}, name)
    ? ((FIELDS[of.args] as Record<string, (input: PolicyInput) => string>)[name] ?? null)
    : null;
}

/**
 * A quota key made only of string literals, those fields and `+` (`"tenant"`, `agent.name`,
 * `principal.sub + "/" + call.mode`: the usual keys), as a function of the call: the same string
 * CEL gives, without building the call's variables or walking the expression per call. Null for
 * any other expression (CEL evaluates it).
 */
export function directKey(ast: ASTNode): ((input: PolicyInput) => string) | null {
  const node = ast as unknown as Node;
  if (node.op === "value") {
    if (typeof node.args !== "string") return null;
    const text = node.args;
    return () => text;
  }
  if (node.op === ".") return stringField(node);
  if (node.op === "+" && Array.isArray(node.args) && node.args.length === 2) {
    const left = directKey(node.args[0] as ASTNode);
    const right = left && directKey(node.args[1] as ASTNode);
    if (!left || !right) return null;
    return (input) => left(input) + right(input);
  }
  return null;
}
