import { DurableObject } from "cloudflare:workers";
import { setting } from "../workers/config.ts";
import { db } from "../workers/db/client.ts";
import { claimHandoff, failHandoff, hasOpenHandoffs, listPendingHandoffs, reclaimStaleHandoffs } from "../workers/db/handoff.ts";

/** While rows are pending or running the alarm comes back this often. */
export const HANDOFF_REARM_MS = 2_000;
/** A row running longer than this (past the CLI's 15-minute wait) is stale: its worker died. */
export const HANDOFF_LEASE_MS = 16 * 60_000;

/** `HANDOFF_PICKUP=poll` (bench baseline only): ignore request events, poll every 2 s. */
function pollMode(env: Env): boolean {
  return setting(env.HANDOFF_PICKUP) === "poll";
}

/** The one scheduler instance. */
export function handoffScheduler(env: Env) {
  return env.HANDOFF_SCHEDULER.get(env.HANDOFF_SCHEDULER.idFromName("global"));
}

/**
 * Picks up handoffs the moment they are requested: `notify()` (called when a request
 * lands) claims every pending row and hands each to its session's object without waiting
 * for the others; an alarm repeats that every 2 s while rows are open, and the cron tick
 * re-arms it and fails rows whose worker died. Claims are compare-and-set in D1, so
 * concurrent pickups (events, alarms, cron) never claim a row twice.
 */
export class HandoffScheduler extends DurableObject<Env> {
  #running: Promise<string[]> | null = null;
  #again = false;

  /** A request landed. */
  async notify(): Promise<void> {
    if (pollMode(this.env)) {
      await this.#armAt(Math.ceil((Date.now() + 1) / HANDOFF_REARM_MS) * HANDOFF_REARM_MS);
      return;
    }
    await this.pickup();
    await this.#armAt(Date.now() + HANDOFF_REARM_MS);
  }

  /** Claims and starts every pending row. Overlapping calls coalesce into one more pass. */
  async pickup(): Promise<string[]> {
    if (this.#running) {
      this.#again = true;
      return this.#running;
    }
    this.#running = this.#pass().finally(() => (this.#running = null));
    const claimed = await this.#running;
    if (this.#again) {
      this.#again = false;
      claimed.push(...(await this.pickup()));
    }
    return claimed;
  }

  async #pass(): Promise<string[]> {
    const d = db(this.env);
    const rows = await listPendingHandoffs(d);
    const started = await Promise.all(
      rows.map(async (row) => {
        if (!(await claimHandoff(d, row.id))) return null;
        try {
          const agent = this.env.SESSION_AGENT.get(this.env.SESSION_AGENT.idFromName(row.id));
          await agent.acceptHandoff({ sessionId: row.id, requestedAt: row.handoffRequestedAt ?? 0, platform: row.handoffPlatform ?? "", chatId: row.handoffChatId, thread: row.handoffThread !== 0 });
          return row.id;
        } catch (err) {
          await failHandoff(d, row.id, `could not start the handoff: ${err instanceof Error ? err.message : String(err)}`, { onlyStates: ["running"] });
          return null;
        }
      }),
    );
    return started.filter((id): id is string => id !== null);
  }

  override async alarm(): Promise<void> {
    await this.pickup();
    if (await hasOpenHandoffs(db(this.env))) await this.#armAt(Date.now() + HANDOFF_REARM_MS);
  }

  /** Cron (every minute): fail rows past their lease, and make sure the alarm is armed. */
  async tick(now: number): Promise<{ reclaimed: string[] }> {
    const d = db(this.env);
    const reclaimed = await reclaimStaleHandoffs(d, now - HANDOFF_LEASE_MS, now);
    if (await hasOpenHandoffs(d)) await this.#armAt(Date.now());
    return { reclaimed };
  }

  async #armAt(at: number): Promise<void> {
    const current = await this.ctx.storage.getAlarm();
    if (current === null || current > at) await this.ctx.storage.setAlarm(at);
  }
}
