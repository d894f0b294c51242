import { DurableObject } from "cloudflare:workers";
import { attempt, FORGET_AFTER_MS, type ThrottleState } from "../../workers/console/throttle.ts";

const KEY = "state";

/**
 * One per client (IPv4 address or IPv6 /64): the console's failed sign-ins from there, so
 * every isolate sees the same count. The schedule is `workers/console/throttle.ts`; this
 * object only keeps its state, serialises attempts, and forgets a quiet client.
 */
export class SignInGuard extends DurableObject<Env> {
  /** Takes an attempt at `now` (counted as failed until `succeeded`), or says how long to wait. */
  async attempt(now: number): Promise<{ ok: true } | { ok: false; retryAfterMs: number }> {
    const result = attempt(this.ctx.storage.kv.get<ThrottleState>(KEY) ?? null, now);
    if (!result.ok) return result;
    this.ctx.storage.kv.put(KEY, result.state);
    await this.ctx.storage.setAlarm(now + FORGET_AFTER_MS);
    return { ok: true };
  }

  /**
   * A `/v1` bearer check whose result (`right`) the Worker already knows, judged here so
   * that it counts like a sign-in: while the client must wait, even the right token is
   * refused; a wrong one is counted (the wait starts after the free ones); a right one
   * clears the count. Serialised by the object, so parallel guesses are counted one by one.
   */
  async bearer(now: number, right: boolean): Promise<{ ok: boolean; retryAfterMs?: number }> {
    const state = this.ctx.storage.kv.get<ThrottleState>(KEY) ?? null;
    if (right) {
      if (state && now - state.lastAt < FORGET_AFTER_MS && now < state.blockedUntil) return { ok: false, retryAfterMs: state.blockedUntil - now };
      if (state) await this.ctx.storage.deleteAll();
      return { ok: true };
    }
    const result = await this.attempt(now);
    return result.ok ? { ok: false } : result;
  }

  /** The attempt had the right token: the count starts again. */
  async succeeded(): Promise<void> {
    await this.ctx.storage.deleteAll();
  }

  /** Quiet for a day: nothing kept. */
  override async alarm(): Promise<void> {
    await this.ctx.storage.deleteAll();
  }
}
