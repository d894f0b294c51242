import { describe, expect, it } from "vitest";
import { IdleWaiters } from "../../workers/runtime/idle.ts";

/** Whether a promise has settled, after the microtasks queued so far ran. */
async function settled(p: Promise<unknown>): Promise<boolean> {
  let done = false;
  void p.then(() => (done = true));
  await Promise.resolve();
  await Promise.resolve();
  return done;
}

describe("the one wait-until-idle", () => {
  it("resolves at once when already idle", async () => {
    const waiters = new IdleWaiters(() => true);
    expect(await settled(waiters.wait())).toBe(true);
  });

  it("wakes every waiter at the first check that finds the owner idle, and not before", async () => {
    let busy = 2;
    const waiters = new IdleWaiters(() => busy === 0);
    const a = waiters.wait();
    const b = waiters.wait();
    busy = 1;
    waiters.check();
    expect([await settled(a), await settled(b)]).toEqual([false, false]);
    busy = 0;
    expect(waiters.idle).toBe(true);
    // Idle without a check: waiters already waiting are woken only by the owner's check.
    expect(await settled(a)).toBe(false);
    waiters.check();
    expect([await settled(a), await settled(b)]).toEqual([true, true]);
  });

  it("does not wake later waiters with an earlier check", async () => {
    let busy = false;
    const waiters = new IdleWaiters(() => !busy);
    waiters.check();
    busy = true;
    const late = waiters.wait();
    expect(await settled(late)).toBe(false);
    busy = false;
    waiters.check();
    expect(await settled(late)).toBe(true);
  });
});
