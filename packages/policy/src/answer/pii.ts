import { isValidPhoneNumber } from "libphonenumber-js";
import validator from "validator";
import type { Detector, Finding } from "./findings.ts";
import { digitsWithin, hasDigit, ownDetector } from "./own.ts";
import type { GatedDetector } from "./scan.ts";
import type { PiiKind } from "./schema.ts";

/**
 * PII detectors: the gateway's own linear candidate patterns find candidates (own.ts: never a
 * backtracking blow-up on an upstream's text), and maintained validators keep only real ones:
 * `validator` for e-mail addresses, IP addresses, card numbers (issuer ranges and the Luhn check)
 * and IBANs (the ISO 13616 mod-97 checksum), `libphonenumber-js` (Google's numbering plan data)
 * for phone numbers. docs/adr/0031-answer-guardrails-detection.md and 0036 say why.
 */
const digitsOnly = (s: string) => s.replace(/[^0-9A-Za-z]/g, "");

/** SSA rules for a number that can be issued: no 000, 666 or 9xx area, no 00 group, no 0000 serial. */
function issuableSsn(s: string): boolean {
  const d = s.replace(/\D/g, "");
  const area = d.slice(0, 3);
  return (
    area !== "000" && area !== "666" && area[0] !== "9" && d.slice(3, 5) !== "00" && d.slice(5) !== "0000"
  );
}

// Each kind's candidate pattern has bounded repeats only (own.ts). A text without a digit is not
// scanned for the kinds whose every candidate holds one (looked for once per text: scan.ts).
const PHONE =
  // international `+CC …` and North American `(NPA) NXX-XXXX`; national ones are read as US.
  // libphonenumber's own text matcher is not used: on digit-dense text it costs seconds per MiB.
  "\\+[0-9]{1,3}[ .-]?(?:\\([0-9]{1,4}\\)|[0-9]{1,4})(?:[ .-]?[0-9]{2,4}){2,4}\\b|(?:\\([0-9]{3}\\) ?|\\b[0-9]{3}[ .-]?)[0-9]{3}[ .-]?[0-9]{4}\\b";
const CARD = "\\b[0-9](?:[ -]?[0-9]){11,18}\\b";
const IBAN = "\\b[A-Z]{2}[0-9]{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?\\b";
const SSN = "\\b[0-9]{3}[- ][0-9]{2}[- ][0-9]{4}\\b";
const IPV4 = "\\b(?:[0-9]{1,3}\\.){3}[0-9]{1,3}\\b";
const IP = `${IPV4}|(?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f]{0,4}`;

// How far each digit-bearing kind's candidates reach from the text's first and last digits
// (own.ts): cards and SSNs start and end with a digit, phones start at most one character ahead
// (`+`, `(`), IBANs two (the country code) and run at most 43 characters from there. Each `after`
// leaves room for the separator and the character a search may read past a candidate's end.
const ENDS_IN_DIGIT = { before: 0, after: 8 };
const PHONE_REACH = { before: 1, after: 8 };
const IBAN_REACH = { before: 2, after: 48 };
const always = () => true;

const DETECTORS: Readonly<Record<PiiKind, GatedDetector>> = {
  email: { detector: emailDetector },
  phone: {
    detector: ownDetector(PHONE, "phone", (s) => isValidPhoneNumber(s, "US"), always, PHONE_REACH),
    needs: digitsWithin,
  },
  credit_card: {
    detector: ownDetector(
      CARD,
      "credit_card",
      (s) => validator.isCreditCard(digitsOnly(s)),
      always,
      ENDS_IN_DIGIT,
    ),
    needs: digitsWithin,
  },
  iban: {
    detector: ownDetector(IBAN, "iban", (s) => validator.isIBAN(digitsOnly(s)), always, IBAN_REACH),
    needs: digitsWithin,
  },
  us_ssn: { detector: ownDetector(SSN, "us_ssn", issuableSsn, always, ENDS_IN_DIGIT), needs: digitsWithin },
  ip_address: { detector: ipDetector() },
};

/**
 * IP addresses: dotted quads, and colon-separated hex groups (IPv6). A text without a colon holds
 * no IPv6 candidate, so it is scanned for dotted quads alone: the hex alternative could start at
 * any letter a–f of prose.
 */
function ipDetector(): Detector {
  const valid = (s: string) => validator.isIP(s);
  const quads = ownDetector(IPV4, "ip_address", valid, hasDigit);
  const both = ownDetector(IP, "ip_address", valid);
  return (text, out) => (text.includes(":") ? both(text, out) : quads(text, out));
}

/** RFC 5321's bound on a local part: a candidate keeps at most this much before its `@`. */
const LOCAL_MAX = 64;
const LOCAL = new Uint8Array(128);
const DOMAIN = new Uint8Array(128);
for (const c of "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-") {
  LOCAL[c.charCodeAt(0)] = 1;
  DOMAIN[c.charCodeAt(0)] = 1;
}
for (const c of ".!#$%&'*+/=?^_`{|}~") LOCAL[c.charCodeAt(0)] = 1;
const isLocal = (text: string, i: number) => LOCAL[text.charCodeAt(i)] === 1;
const isDomain = (text: string, i: number) => DOMAIN[text.charCodeAt(i)] === 1;

/**
 * E-mail addresses, scanned from each `@`: the candidate RE2 would find for
 * `[local]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+` leftmost-first (a local run before the `@`, never
 * reaching back into the previous candidate; a dotted domain after it), its local part cut to the
 * last 64 characters and its leading dots, then judged by `validator`. Each character is read a
 * bounded number of times: a walk back stops after 65 characters, a domain ends at the next `@`.
 */
function emailDetector(text: string, out: Finding[]): void {
  let from = 0;
  for (let at = text.indexOf("@"); at >= 0; at = text.indexOf("@", at + 1)) {
    let s = at;
    const floor = Math.max(from, at - LOCAL_MAX - 1);
    while (s > floor && isLocal(text, s - 1)) s--;
    if (s === at) continue;
    let e = at + 1;
    while (e < text.length && isDomain(text, e)) e++;
    if (e === at + 1) continue;
    let end = -1;
    while (text.charCodeAt(e) === 0x2e) {
      let f = e + 1;
      while (f < text.length && isDomain(text, f)) f++;
      if (f === e + 1) break;
      end = f;
      e = f;
    }
    if (end < 0) continue;
    from = end;
    let start = Math.max(s, at - LOCAL_MAX);
    while (text.charCodeAt(start) === 0x2e) start++;
    if (validator.isEmail(text.slice(start, end))) out.push({ start, end, kind: "email" });
  }
}

const ORDER: readonly PiiKind[] = ["credit_card", "iban", "us_ssn", "email", "ip_address", "phone"];

/** The detectors of the named kinds with the characters they need, cards and IBANs first (their digits would pass for phones). */
export function gatedPiiDetectors(kinds: readonly PiiKind[]): GatedDetector[] {
  return ORDER.filter((k) => kinds.includes(k)).map((k) => DETECTORS[k]);
}

/** The detectors of the named kinds, in the order above, each looking for the character it needs. */
export function piiDetectors(kinds: readonly PiiKind[]): Detector[] {
  return gatedPiiDetectors(kinds).map(({ detector, needs }) =>
    needs === undefined
      ? detector
      : (text, out) => {
          const within = needs(text);
          if (within !== null) detector(text, out, within);
        },
  );
}
