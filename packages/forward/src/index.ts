export * from "./call.ts";
export type { ForwardDeps } from "./deps.ts";
export { isRetrySafe } from "./dial.ts";
export { forward } from "./forward.ts";
export type { Answer, AnswerHead, AnswerHook, BodyUse } from "./hooks.ts";
export { chooseTarget } from "./target.ts";
