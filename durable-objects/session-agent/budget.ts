import { reserveTurn, settleTurn } from "../../workers/db/budget.ts";
import { adapterFor } from "../../workers/platforms/registry.ts";
import type { ReplyTarget } from "../../workers/platforms/types.ts";
import { budgetText, utcDay, type SessionRuntime, type TurnRecord } from "../../workers/runtime/index.ts";
import { settings } from "../../workers/settings.ts";
import { logger } from "../../workers/log/index.ts";

/** Messages one user may have waiting in one session; the next is dropped (with one notice). */
export const MAX_WAITING_PER_USER = 5;

export const SLOW_DOWN_TEXT = `Slow down: ${MAX_WAITING_PER_USER} of your messages are already waiting here, so this one (and any more until they are answered) was dropped. Send it again once the answers arrive.`;

/** Said when the rest of today's allowance is held by the user's turns running in other chats. */
export function busyElsewhereText(budget: number): string {
  return `Your messages in other chats are using the rest of today's allowance of ${budget.toLocaleString("en-US")} tokens right now, so this message was not answered. Send it again once they are answered.`;
}

/** The platform user a turn is for (null: the CLI or an internal turn, never limited). */
function userOf(turn: { meta: Record<string, unknown> }): string | null {
  const k = turn.meta.userKey;
  return typeof k === "string" && k !== "" ? k : null;
}

/**
 * A session's side of `DAILY_TOKEN_BUDGET` and of the per-user waiting cap: turns are
 * admitted when they start against what D1 holds for their user (workers/db/budget.ts,
 * shared by all of the user's sessions) and settled when they end; the notices are said
 * once (per session and day for the budget, per flood for the cap).
 */
export class SessionBudget {
  readonly #env: Env;
  readonly #session: string;
  readonly #kv: SyncKvStorage;

  constructor(env: Env, session: string, kv: SyncKvStorage) {
    this.#env = env;
    this.#session = session;
    this.#kv = kv;
  }

  async admit(turn: TurnRecord): Promise<{ ok: true } | { ok: false; notice: string | null }> {
    const budget = settings(this.#env).dailyTokenBudget;
    const user = userOf(turn);
    if (budget === null || user === null || turn.origin !== "platform") return { ok: true };
    const now = Date.now();
    const day = utcDay(now);
    const reserve = settings(this.#env).contextTokens;
    const taken = await reserveTurn(this.#env.DB, { turnId: turn.turnId, sessionId: this.#session, userKey: user, day, budget, reserve, now });
    if (taken.ok) return taken;
    // The allowance is held by the user's turns running elsewhere: said every time (it passes).
    if (taken.used < budget) return { ok: false, notice: busyElsewhereText(budget) };
    const toldKey = `budget_told:${user}`;
    if (this.#kv.get<string>(toldKey) === day) return { ok: false, notice: null };
    this.#kv.put(toldKey, day);
    return { ok: false, notice: budgetText(taken.used, budget, now) };
  }

  settle(turn: TurnRecord, tokens: number): Promise<void> | undefined {
    if (settings(this.#env).dailyTokenBudget === null || userOf(turn) === null || turn.origin !== "platform") return undefined;
    return settleTurn(this.#env.DB, { turnId: turn.turnId, sessionId: this.#session, tokens, now: Date.now() });
  }

  /**
   * Whether a platform message from `user` may wait here: at most MAX_WAITING_PER_USER of
   * theirs queued. The first one over is answered with SLOW_DOWN_TEXT; the rest are dropped
   * silently until their queue has room again.
   */
  async mayWait(runtime: SessionRuntime, user: string, target: ReplyTarget): Promise<boolean> {
    const waiting = runtime.queue.all("queued").filter((t) => userOf(t) === user).length;
    const toldKey = `slow_told:${user}`;
    if (waiting < MAX_WAITING_PER_USER) {
      if (this.#kv.get(toldKey) !== undefined) this.#kv.delete(toldKey);
      return true;
    }
    if (this.#kv.get(toldKey) === undefined) {
      this.#kv.put(toldKey, 1);
      const adapter = adapterFor(this.#env, target.platform);
      await adapter?.show(target, SLOW_DOWN_TEXT, [], "final").catch((err: unknown) => logger.child("session").warn("could not say slow down", { err }));
    }
    return false;
  }
}
