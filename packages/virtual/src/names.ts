import type { Member } from "./members.ts";

/** What separates a member's prefix from its own name in an exposed name. */
export const SEPARATOR = "__";

/** The name a member's tool or prompt is exposed under: `<prefix>__<name>`, or the name itself. */
export function exposedName(member: Pick<Member, "prefix">, name: string): string {
  return member.prefix === "" ? name : `${member.prefix}${SEPARATOR}${name}`;
}

/**
 * The member an exposed name belongs to and the member's own name, or null. A prefixed member
 * owns the names that start with its prefix and the separator; a member with the empty prefix
 * owns every other name. The include/exclude patterns apply to the member's own name, so a name
 * they drop is unknown here as it is absent from the lists.
 */
export function routeName<M extends Pick<Member, "prefix" | "include" | "exclude">>(
  members: readonly M[],
  exposed: string,
  kind: "tool" | "prompt",
): { member: M; name: string } | null {
  let fallback: M | null = null;
  for (const member of members) {
    if (member.prefix === "") {
      fallback ??= member;
      continue;
    }
    const head = `${member.prefix}${SEPARATOR}`;
    if (exposed.startsWith(head) && exposed.length > head.length) {
      const name = exposed.slice(head.length);
      return kind === "prompt" || keeps(member, name) ? { member, name } : null;
    }
  }
  if (fallback && (kind === "prompt" || keeps(fallback, exposed))) return { member: fallback, name: exposed };
  return null;
}

/** Whether a member's tool passes its include and exclude patterns (a trailing `*` matches any rest). */
export function keeps(member: Pick<Member, "include" | "exclude">, name: string): boolean {
  if (member.include && !member.include.some((p) => matches(p, name))) return false;
  return !member.exclude?.some((p) => matches(p, name));
}

function matches(pattern: string, name: string): boolean {
  return pattern.endsWith("*") ? name.startsWith(pattern.slice(0, -1)) : pattern === name;
}
