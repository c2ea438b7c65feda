// @stores once: opens both stores itself in one pass.
import { randomUUID } from "node:crypto";
import { migrate, openStore, type Reservation, type Store } from "@gw/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createInvocationLifecycle, type Lifecycle } from "../src/lifecycle.ts";
import { ReservationTaken } from "../src/repos/invocation-reservations.ts";

// The keys a verified payment takes before the dial (ADR 0047), group-committed (ADR 0051):
// concurrent calls share one statement, and of the calls holding one key exactly one wins it, in
// one batch or across batches.

const stores: Array<[string, string | undefined]> = [["embedded", undefined]];
if (process.env.DATABASE_URL) stores.push(["postgres", process.env.DATABASE_URL]);

const nonce = (key = randomUUID()): Reservation => ({ kind: "payment_nonce", scope: "", key });
const ref = () => ({ tenantId: "t-reserve", id: `inv_${randomUUID()}`, agentId: "agt_reserve" });

describe.each(stores)("reservations taken before the dial (%s store)", (_name, url) => {
  let store: Store;
  let life: Lifecycle;
  // A second process's lifecycle: its own pool on Postgres (the embedded store is one process's).
  let other: Store | undefined;
  let otherLife: Lifecycle;
  beforeAll(async () => {
    store = await openStore(url);
    await migrate(store);
    life = createInvocationLifecycle({ store });
    other = url ? await openStore(url) : undefined;
    otherLife = createInvocationLifecycle({ store: other ?? store });
  });
  afterAll(async () => {
    await other?.close();
    await store?.close();
  });

  const holders = async (key: string) =>
    (
      await store.query("select invocation_id from reservations where kind = 'payment_nonce' and key = $1", [
        key,
      ])
    ).map((r) => r.invocation_id);
  /** Every call's outcome: "won", or the kind its `ReservationTaken` names. */
  const outcomes = (calls: Array<{ id: string; keys: Reservation[]; on?: Lifecycle }>) =>
    Promise.all(
      calls.map((c) =>
        (c.on ?? life).reserve({ ...ref(), id: c.id }, c.keys).then(
          () => "won",
          (e: unknown) => {
            if (e instanceof ReservationTaken) return e.kind;
            throw e;
          },
        ),
      ),
    );

  it("sixteen concurrent calls with one key: exactly one wins, the rest are refused naming the key", async () => {
    const key = nonce();
    const calls = Array.from({ length: 16 }, () => ({ id: ref().id, keys: [key] }));
    const got = await outcomes(calls);
    expect(got.filter((o) => o === "won")).toHaveLength(1);
    expect(got.filter((o) => o === "payment_nonce")).toHaveLength(15);
    expect(await holders(key.key)).toEqual([calls[got.indexOf("won")]?.id]);
    // A key committed earlier is refused too.
    expect(await outcomes([{ id: ref().id, keys: [key] }])).toEqual(["payment_nonce"]);
  });

  it("sixteen concurrent calls with keys of their own: every one wins its key", async () => {
    const calls = Array.from({ length: 16 }, () => ({ id: ref().id, keys: [nonce()] }));
    expect(await outcomes(calls)).toEqual(calls.map(() => "won"));
    for (const c of calls) expect(await holders(c.keys[0]?.key as string)).toEqual([c.id]);
  });

  it("concurrent calls, some sharing keys: one winner per key, the others all pass", async () => {
    const shared = [nonce(), nonce()];
    const calls = [
      ...Array.from({ length: 12 }, (_, i) => ({ id: ref().id, keys: [shared[i % 2] as Reservation] })),
      ...Array.from({ length: 8 }, () => ({ id: ref().id, keys: [nonce()] })),
    ];
    const got = await outcomes(calls);
    expect(got.slice(12)).toEqual(Array(8).fill("won"));
    for (const k of [0, 1]) {
      const mine = got.slice(0, 12).filter((_, i) => i % 2 === k);
      expect(mine.filter((o) => o === "won")).toHaveLength(1);
    }
  });

  it("two processes, batches holding the same keys in opposite orders: one winner per key", async () => {
    const keys = Array.from({ length: 6 }, () => nonce());
    // Each side's first call goes alone; the rest arrive while it is in flight and share a batch.
    const side = (on: Lifecycle, order: Reservation[]) => [
      { id: ref().id, keys: [nonce()], on },
      ...order.map((k) => ({ id: ref().id, keys: [k], on })),
    ];
    const calls = [...side(life, keys), ...side(otherLife, [...keys].reverse())];
    const got = await outcomes(calls);
    expect(got[0]).toBe("won");
    expect(got[keys.length + 1]).toBe("won");
    for (const k of keys) {
      const holding = calls.flatMap((c, i) => (c.keys[0] === k ? [got[i]] : []));
      expect(holding.sort()).toEqual(["payment_nonce", "won"]);
    }
  });

  it("a call with two keys takes both or neither", async () => {
    const [a, b] = [nonce(), nonce()];
    expect(await outcomes([{ id: ref().id, keys: [b] }])).toEqual(["won"]);
    const id = ref().id;
    expect(await outcomes([{ id, keys: [a, b] }])).toEqual(["payment_nonce"]);
    expect(await holders(a.key)).toEqual([]);
  });
});
