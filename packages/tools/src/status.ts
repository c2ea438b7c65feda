import type { ToolFacts } from "./repo.ts";

/** A tool's status (docs/tools.md). `unknown`: a tools/call of a tool the gateway never saw. */
export const TOOL_STATUSES = ["unpinned", "pinned", "drifted", "removed", "unknown"] as const;
export type ToolStatus = (typeof TOOL_STATUSES)[number];

/** The status of a catalogued tool, from its pin, its presence and its current digest. */
export function statusOf(facts: ToolFacts | undefined): ToolStatus {
  if (!facts) return "unknown";
  if (facts.pinnedDigest === null) return "unpinned";
  if (!facts.present) return "removed";
  return facts.digest === facts.pinnedDigest ? "pinned" : "drifted";
}

/**
 * The status a tool has in an answer being relayed now: its pin judged against the digest the
 * server just sent (a tool in a list is present, whatever the last complete list said).
 */
export function statusInAnswer(facts: ToolFacts | undefined, digest: string): ToolStatus {
  if (!facts) return "unpinned";
  if (facts.pinnedDigest === null) return "unpinned";
  return facts.pinnedDigest === digest ? "pinned" : "drifted";
}
