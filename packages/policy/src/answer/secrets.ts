import type { Detector, Finding } from "./findings.ts";
import type { GatedDetector } from "./scan.ts";

/**
 * Well-known credential shapes, published by their issuers as prefixes and alphabets (the ones
 * secret scanners look for), leftmost-first in this order, a signed JWT and a PEM private key
 * last. Every shape starts with its literal prefix; each of these ends with its only unbounded
 * run, so an attempt fails within a bounded number of characters or consumes what it read
 * (own.ts). The JWT and the PEM block cannot be written so: `tokenShapes` matches them with the
 * guards it describes.
 */
const SHAPES = [
  "(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}", // AWS access key id
  "gh[pousr]_[A-Za-z0-9]{36,}", // GitHub tokens
  "github_pat_[A-Za-z0-9_]{22,}", // GitHub fine-grained token
  "glpat-[A-Za-z0-9_-]{20,}", // GitLab personal access token
  "xox[abposr]-[A-Za-z0-9-]{10,}", // Slack tokens
  "sk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}", // OpenAI and Anthropic API keys
  "AIza[0-9A-Za-z_-]{35}", // Google API key
  "(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{16,}", // Stripe secret and restricted keys
  "npm_[A-Za-z0-9]{36}", // npm token
];
/** Where a shape can start: its literal prefix (a JWT's `eyJ`, a PEM block's `-----BEGIN `). */
const PREFIX =
  /AKIA|ASIA|ABIA|ACCA|gh[pousr]_|github_pat_|glpat-|xox[abposr]-|sk-|AIza|[sr]k_(?:live|test)_|npm_|eyJ|-----BEGIN /g;
const SHAPE = new RegExp(`(?:${SHAPES.join(")|(?:")})`, "y");
/** `eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}`: a signed JWT. */
const JWT = /eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/y;
const B64URL_RUN = /[A-Za-z0-9_-]*/y;
/** `-----BEGIN [A-Z ]*PRIVATE KEY-----(?s:.*?)-----END [A-Z ]*PRIVATE KEY-----`, in two halves. */
const PEM_BEGIN = /-----BEGIN [A-Z ]*PRIVATE KEY-----/y;
const PEM_END = /-----END [A-Z ]*PRIVATE KEY-----/y;

const stickyAt = (re: RegExp, text: string, at: number): number => {
  re.lastIndex = at;
  const m = re.exec(text);
  return m === null ? -1 : at + m[0].length;
};

/** The token shapes' matches in `text`, as RE2 finds them for the alternation, scanning once. */
function tokenShapes(text: string, out: Finding[]): void {
  let from = 0;
  // A JWT attempt that failed past its first run fails for every later `eyJ` in that run (its
  // first run ends at the same place, before the same characters), so those are not tried again.
  let jwtDeadUntil = -1;
  // The first `-----END … PRIVATE KEY-----` at or after `endFrom` (-1: none), found once.
  let endFrom = 0;
  let endAt = -2;
  let endEnd = -1;
  PREFIX.lastIndex = 0;
  for (let m = PREFIX.exec(text); m !== null; m = PREFIX.exec(text)) {
    const at = m.index;
    PREFIX.lastIndex = at + 1; // prefixes may overlap: "ASIAKIA…" holds "AKIA" at 3
    if (at < from) continue;
    let end = stickyAt(SHAPE, text, at);
    if (end < 0 && at >= jwtDeadUntil && text.startsWith("eyJ", at)) {
      end = stickyAt(JWT, text, at);
      if (end < 0) jwtDeadUntil = stickyAt(B64URL_RUN, text, at + 3);
    }
    if (end < 0 && text.startsWith("-----BEGIN ", at)) {
      const body = stickyAt(PEM_BEGIN, text, at);
      if (body >= 0) {
        if (endAt !== -1 && endAt < body) {
          endAt = -1;
          for (
            let q = text.indexOf("-----END ", Math.max(body, endFrom));
            q >= 0;
            q = text.indexOf("-----END ", q + 1)
          ) {
            endEnd = stickyAt(PEM_END, text, q);
            if (endEnd >= 0) {
              endAt = q;
              break;
            }
          }
          endFrom = endAt >= 0 ? endAt : text.length;
        }
        if (endAt >= body) end = endEnd;
      }
    }
    if (end < 0) continue;
    out.push({ start: at, end, kind: "secret" });
    from = end;
    PREFIX.lastIndex = end;
  }
}

/**
 * The well-known token shapes: a search for their prefixes on the JavaScript engine, run on every
 * text (a set's pass would cost more than the search it spares).
 */
export const TOKEN_SHAPES: GatedDetector = { detector: tokenShapes };

/**
 * The credential the gateway injected for this call, as sent and percent-encoded (a text value is
 * already JSON-decoded), found by `indexOf`; null when it injected none.
 */
export function injectedSecretDetector(injected: string): Detector | null {
  if (injected === "") return null;
  const forms = [...new Set([injected, encodeURIComponent(injected)])];
  return (text, out) => {
    for (const form of forms) findAll(text, form, out);
  };
}

/**
 * Secrets in an answer: the well-known token shapes, and, when the gateway injected a credential
 * for this call, that secret.
 */
export function secretsDetector(injected: string): Detector {
  const own = injectedSecretDetector(injected);
  if (own === null) return tokenShapes;
  return (text, out) => {
    tokenShapes(text, out);
    own(text, out);
  };
}

function findAll(text: string, needle: string, out: Finding[]): void {
  for (let at = text.indexOf(needle); at >= 0; at = text.indexOf(needle, at + needle.length)) {
    out.push({ start: at, end: at + needle.length, kind: "secret" });
  }
}
