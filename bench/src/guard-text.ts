/**
 * A 4 KiB tools/call text for the answer-guard rows (`/mcp?answer=4k`): prose with an e-mail
 * address, a card number, a phone number and a GitHub token in it.
 */
export const GUARDED_TEXT = (() => {
  const leaks =
    " write to ada@example.com, card 4111 1111 1111 1111, call +1 415 555 2671, token ghp_0123456789abcdefghijABCDEFGHIJ012345 ";
  const prose = "The quarterly report shows steady growth in every region we serve. ";
  let text = leaks;
  while (text.length < 4096 - prose.length) text += prose;
  return text.padEnd(4096, ".");
})();
