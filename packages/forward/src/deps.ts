import type { Runtime } from "@gw/runtime";
import type { AnswerHook } from "./hooks.ts";

/**
 * What step 9 needs of the runtime. Kept apart from call.ts: the hooks it carries read a
 * `ForwardCall`, so the two types in one file would make call.ts and hooks.ts import each other.
 */
export type ForwardDeps = Pick<
  Runtime,
  "store" | "keyring" | "dispatcher" | "config" | "features" | "oauth"
> & {
  /** The answer-side features (hooks.ts); none: every answer goes on as the upstream sent it. */
  readonly answerHooks?: readonly AnswerHook[];
};
