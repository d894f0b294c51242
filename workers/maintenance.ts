import { and, asc, eq, isNotNull, lt } from "drizzle-orm";
import { ensureConnection } from "./conversations/connections.ts";
import { sessionAgent } from "./conversations/stubs.ts";
import { db } from "./db/client.ts";
import { markCronRun } from "./db/meta.ts";
import { messages, sessions } from "./db/schema.ts";
import { logger } from "./log/index.ts";
import { settings } from "./settings.ts";

/** A turn D1 shows running for longer than this gets its object woken (its alarm may be lost). */
export const STUCK_TURN_MS = 60_000;
/** A handoff pending this long was not picked up by its object: wake it. */
export const UNCLAIMED_HANDOFF_MS = 10_000;
/** A handoff running longer than this (past the CLI's 15-minute wait) is stale: its runner died or hung. */
export const HANDOFF_LEASE_MS = 16 * 60_000;

/** What one cron run did. */
export interface MaintenanceReport {
  /** Sessions whose object was woken to recover a turn or pick up a handoff. */
  woken: number;
  /** Handoffs failed because they ran past their lease. */
  expiredHandoffs: number;
  /** Messages deleted for being older than RETENTION_DAYS. */
  retained: number;
}

/** Sessions whose old messages one cron run deletes (bounded: the rest wait for the next minute). */
export const RETENTION_SESSIONS_PER_RUN = 20;

/**
 * Cron work (every minute), the safety net behind the objects' own alarms: wakes the object
 * of any session D1 shows with a turn running too long or a handoff left pending, and fails
 * handoffs running past their lease (never re-queued: a retry could deliver twice).
 */
export async function runMaintenance(env: Env, now: number): Promise<MaintenanceReport> {
  const d = db(env);
  const [stuck, unclaimed, stale] = await d.batch([
    d
      .select({ id: sessions.id })
      .from(sessions)
      .where(and(isNotNull(sessions.activeTurnId), lt(sessions.turnStartedAt, now - STUCK_TURN_MS)))
      .orderBy(asc(sessions.turnStartedAt))
      .limit(100),
    d
      .select({ id: sessions.id })
      .from(sessions)
      .where(and(eq(sessions.handoffState, "pending"), lt(sessions.handoffRequestedAt, now - UNCLAIMED_HANDOFF_MS)))
      .limit(100),
    d
      .select({ id: sessions.id })
      .from(sessions)
      .where(and(eq(sessions.handoffState, "running"), lt(sessions.handoffClaimedAt, now - HANDOFF_LEASE_MS)))
      .limit(100),
  ]);
  const ids = [...new Set([...stuck, ...unclaimed].map((r) => r.id))];
  const woken = await Promise.all(
    ids.map((id) =>
      sessionAgent(env, id)
        .recover()
        .then(
          (r) => r.ok && r.work,
          () => false,
        ),
    ),
  );
  const expire = (id: string) =>
    sessionAgent(env, id)
      .expireHandoff(now - HANDOFF_LEASE_MS)
      .then(
        (e) => e.ok && e.expired,
        () => false,
      );
  const expired = await Promise.all(stale.map((r) => expire(r.id)));
  // DISCORD_GATEWAY=on: the Gateway object reconnects if it is down and re-arms its watch alarm.
  await ensureConnection(env).catch((err: unknown) => logger.error("the Gateway object could not be reached", { err }));
  const report = { woken: woken.filter(Boolean).length, expiredHandoffs: expired.filter(Boolean).length, retained: await retention(env, now) };
  // For `hermes-edge status`: a cron that stopped running is a problem worth showing.
  await markCronRun(d, now);
  return report;
}

/** RETENTION_DAYS: each session with messages older than the cutoff deletes them (its summary keeps the gist). */
async function retention(env: Env, now: number): Promise<number> {
  const days = settings(env).retentionDays;
  if (days === null) return 0;
  const cutoff = now - days * 24 * 60 * 60 * 1000;
  const d = db(env);
  const old = await d.selectDistinct({ id: messages.sessionId }).from(messages).where(lt(messages.createdAt, cutoff)).limit(RETENTION_SESSIONS_PER_RUN);
  const gone = await Promise.all(
    old.map((r) =>
      sessionAgent(env, r.id)
        .applyRetention(cutoff)
        .then((g) => (g.ok ? g.deleted : 0))
        .catch((err: unknown) => (logger.child("retention").error("a session could not be trimmed", { session: r.id, err }), 0)),
    ),
  );
  return gone.reduce((a, b) => a + b, 0);
}
