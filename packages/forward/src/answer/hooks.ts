import type {
  Answer,
  AnswerCall,
  AnswerHead,
  AnswerHook,
  BodyUse,
  EventTransform,
} from "../protocols/protocol.ts";
import { eachEventWhole } from "./each-event.ts";

/**
 * The answer-side features of one answer: the one place step 9 lets features see the answers
 * they asked for before they are relayed or stored. Null when no hook wants this answer, which is
 * every answer but the few a hook names (the relay then runs exactly as without hooks).
 */
export class AnswerPlan {
  readonly hold: boolean;
  readonly maxBytes: number;
  /** A lone holder's `endsAt` (several holders read to the end of the stream). */
  readonly endsAt: ((chunk: Buffer) => boolean) | null;
  /** A per-event transform of the relayed stream, when nothing holds the answer whole. */
  readonly each: EventTransform | null;
  #chunks: Buffer[] = [];
  #size = 0;
  #over = false;

  private constructor(private readonly uses: readonly BodyUse[]) {
    this.hold = uses.some((u) => u.hold);
    this.maxBytes = Math.max(...uses.map((u) => u.maxBytes));
    const holders = uses.filter((u) => u.hold);
    this.endsAt = holders.length === 1 ? (holders[0]?.endsAt ?? null) : null;
    this.each = this.hold ? null : (uses.find((u) => u.each)?.each ?? null);
    // Nothing to tee when no observer wants the body (a per-event transform alone keeps nothing).
    this.#over = !uses.some((u) => !u.hold && u.seen);
  }

  static open(
    hooks: readonly AnswerHook[] | undefined,
    call: AnswerCall,
    head: AnswerHead,
    request: Buffer | null,
  ): AnswerPlan | null | Promise<AnswerPlan | null> {
    if (!hooks || hooks.length === 0) return null;
    const uses: Array<BodyUse | Promise<BodyUse | null>> = [];
    let waits = false;
    for (const hook of hooks) {
      const use = hook(call, head, request);
      if (use instanceof Promise) waits = true;
      if (use) uses.push(use);
    }
    if (uses.length === 0) return null;
    if (!waits) return new AnswerPlan(uses as BodyUse[]);
    return Promise.all(uses).then((all) => {
      const wanted = all.filter((u): u is BodyUse => u !== null);
      return wanted.length > 0 ? new AnswerPlan(wanted) : null;
    });
  }

  /** A teed chunk of a relayed body (kept while the total stays within `maxBytes`). */
  add(chunk: Buffer): void {
    if (this.#over) return;
    this.#size += chunk.length;
    if (this.#size > this.maxBytes) {
      this.#over = true;
      this.#chunks = [];
      return;
    }
    this.#chunks.push(chunk);
  }

  /** The teed body was relayed (`delivered`: whole): observers get it. */
  finish(delivered: boolean): void {
    const body = delivered && !this.#over ? Buffer.concat(this.#chunks) : null;
    this.#chunks = [];
    for (const u of this.uses) u.seen?.(body);
  }

  /**
   * A held or collected answer: observers see it, holders and per-event transforms reshape it, in
   * order (a per-event transform reads it whatever its size: its bound is per event).
   */
  async reshape(answer: Answer, whole: boolean): Promise<Answer> {
    let out = answer;
    for (const u of this.uses) {
      if (u.each) out = await eachEventWhole(out, u.each);
      else if (!u.hold) u.seen?.(whole ? answer.body : null);
      else if (u.reshape) out = await u.reshape(out, whole);
    }
    return out;
  }
}

/**
 * A collected (transactional) answer through the hooks: read whole already (under the collect
 * cap, which is larger than a hook's), reshaped if asked. A body over the plan's `maxBytes` is
 * what a relayed answer over it is: not whole, so observers get null and holders fail closed.
 */
export async function onAnswer(
  hooks: readonly AnswerHook[] | undefined,
  call: AnswerCall,
  answer: Answer,
  request: Buffer | null,
): Promise<Answer> {
  const plan = await AnswerPlan.open(hooks, call, answer, request);
  if (!plan) return answer;
  const whole = answer.body === null || answer.body.length <= plan.maxBytes;
  return plan.reshape(answer, whole);
}
