export * from "./call.ts";
export { isRetrySafe } from "./dial.ts";
export { forward } from "./forward.ts";
export { type Answer, type AnswerHook, answerHooks } from "./hooks.ts";
export { chooseTarget } from "./target.ts";
