import { and, asc, isNotNull, lt } from "drizzle-orm";
import { handoffScheduler } from "../durable-objects/handoff-scheduler.ts";
import { WATCHDOG_MS } from "../durable-objects/session-agent.ts";
import { db } from "./db/client.ts";
import { sessions, webhookDeliveries } from "./db/schema.ts";
import { sessionAgent } from "./http/sessions.ts";

/** Delivery ids are kept long past any platform's retry window, then pruned. */
export const DELIVERY_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;

/** What one cron run did. */
export interface MaintenanceReport {
  prunedDeliveries: number;
  /** Sessions whose turn looked stuck and whose object took up recovery. */
  recoveredTurns: number;
  /** Handoffs failed because their worker died mid-handoff. */
  reclaimedHandoffs: number;
}

/**
 * Cron work (every minute): prunes old webhook delivery ids; wakes the SessionAgent of any
 * session whose turn has run for longer than two watchdog periods, so a turn whose
 * instance died with its alarm unset is still recovered; and ticks the handoff scheduler
 * (re-arm its alarm, fail handoffs running past their lease).
 */
export async function runMaintenance(env: Env, now: number): Promise<MaintenanceReport> {
  const d = db(env);
  const pruned = await d.delete(webhookDeliveries).where(lt(webhookDeliveries.receivedAt, now - DELIVERY_RETENTION_MS)).run();
  const stuck = await d
    .select({ id: sessions.id })
    .from(sessions)
    .where(and(isNotNull(sessions.activeTurnId), lt(sessions.turnStartedAt, now - 2 * WATCHDOG_MS)))
    .orderBy(asc(sessions.turnStartedAt))
    .limit(100);
  // A session with nothing left in its object has its stale flag cleared, so it drops out.
  const woken = await Promise.all(stuck.map((s) => sessionAgent(env, s.id).recover(s.id).catch(() => false)));
  const { reclaimed } = await handoffScheduler(env).tick(now);
  return { prunedDeliveries: pruned.meta.changes ?? 0, recoveredTurns: woken.filter(Boolean).length, reclaimedHandoffs: reclaimed.length };
}
