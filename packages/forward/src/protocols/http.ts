import { RECORDED } from "@gw/invocations";
import type { Protocol } from "./protocol.ts";

const NONE: readonly never[] = [];
const NOTHING = Object.freeze({});

/**
 * A plain HTTP agent: the body is forwarded unread (streamed on the streaming path), any call may
 * be retried on a transient failure, none is repeated after a worker crash (the upstream may have
 * done the work), the answer is stored as it came, and no answer hook applies (answer rules do not read it).
 */
export const http: Protocol<"http"> = {
  name: "http",
  streamMethods: new Set(),
  holdsBody: false,
  parse: () => null,
  records: RECORDED.http,
  recorded: () => NOTHING,
  learn: () => null,
  annotate: () => {},
  retryable: () => true,
  repeatable: () => false,
  collectUpTo: () => null,
  verified: false,
  checksOrigin: false,
  answerTexts: null,
  answerHooks: () => NONE,
};
