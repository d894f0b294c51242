import { and, asc, eq, inArray, isNull, lt, or } from "drizzle-orm";
import type { Db } from "./client.ts";
import { sessions, type SessionRow } from "./schema.ts";

/** Handoff states (SPEC section 4). No state (null) means none was ever requested. */
export type HandoffState = "pending" | "running" | "completed" | "failed";

/** Failure reasons are kept to this many characters. */
export const HANDOFF_ERROR_MAX = 500;

/** The error a stale running row is failed with; it is never re-queued (a retry could deliver twice). */
export const STALE_HANDOFF_ERROR = "gateway stopped mid-handoff; re-run /handoff to try again";

/** What a request asks for. */
export interface HandoffRequest {
  platform: string;
  /** An explicit destination chat; null means the platform's home channel. */
  chatId: string | null;
  /** Open a fresh thread in the destination (default), or post in the chat itself. */
  thread: boolean;
}

/** Where a completed handoff went. */
export interface HandoffDestination {
  chatId: string;
  threadId: string | null;
}

const changed = (r: { meta: { changes?: number } }) => (r.meta.changes ?? 0) === 1;

/** none/completed/failed → pending, clearing the last error and destination. False otherwise. */
export async function requestHandoff(d: Db, sessionId: string, req: HandoffRequest, now = Date.now()): Promise<boolean> {
  const res = await d
    .update(sessions)
    .set({
      handoffState: "pending",
      handoffPlatform: req.platform,
      handoffError: null,
      handoffRequestedAt: now,
      handoffClaimedAt: null,
      handoffFinishedAt: null,
      handoffChatId: req.chatId,
      handoffThread: req.thread ? 1 : 0,
      handoffDestChatId: null,
      handoffDestThreadId: null,
    })
    .where(and(eq(sessions.id, sessionId), or(isNull(sessions.handoffState), inArray(sessions.handoffState, ["completed", "failed"]))))
    .run();
  return changed(res);
}

export async function getHandoffRow(d: Db, sessionId: string): Promise<SessionRow | null> {
  return (await d.select().from(sessions).where(eq(sessions.id, sessionId)).get()) ?? null;
}

/** Pending rows, oldest request first (served by the partial index on open handoffs). */
export async function listPendingHandoffs(d: Db, limit = 100): Promise<SessionRow[]> {
  return d.select().from(sessions).where(eq(sessions.handoffState, "pending")).orderBy(asc(sessions.handoffRequestedAt)).limit(limit);
}

/** Any row pending or running? */
export async function hasOpenHandoffs(d: Db): Promise<boolean> {
  const row = await d.select({ id: sessions.id }).from(sessions).where(inArray(sessions.handoffState, ["pending", "running"])).limit(1).get();
  return row !== undefined;
}

/** Compare-and-set pending → running: exactly one claimer wins. */
export async function claimHandoff(d: Db, sessionId: string, now = Date.now()): Promise<boolean> {
  const res = await d
    .update(sessions)
    .set({ handoffState: "running", handoffClaimedAt: now })
    .where(and(eq(sessions.id, sessionId), eq(sessions.handoffState, "pending")))
    .run();
  return changed(res);
}

/** running → completed, error cleared, destination recorded. */
export async function completeHandoff(d: Db, sessionId: string, dest: HandoffDestination, now = Date.now()): Promise<boolean> {
  const res = await d
    .update(sessions)
    .set({ handoffState: "completed", handoffError: null, handoffFinishedAt: now, handoffDestChatId: dest.chatId, handoffDestThreadId: dest.threadId })
    .where(and(eq(sessions.id, sessionId), eq(sessions.handoffState, "running")))
    .run();
  return changed(res);
}

/**
 * → failed with a reason (cut to 500 characters). `onlyStates` limits which states may
 * fail: a waiter that gives up passes ["pending"], since a claimed row belongs to the
 * gateway that claimed it.
 */
export async function failHandoff(d: Db, sessionId: string, reason: string, opts: { onlyStates?: HandoffState[] } = {}, now = Date.now()): Promise<boolean> {
  const from = opts.onlyStates ?? ["pending", "running"];
  const res = await d
    .update(sessions)
    .set({ handoffState: "failed", handoffError: reason.slice(0, HANDOFF_ERROR_MAX), handoffFinishedAt: now })
    .where(and(eq(sessions.id, sessionId), inArray(sessions.handoffState, from)))
    .run();
  return changed(res);
}

/** Fails every row running since before `claimedBefore` (its worker died). Returns their ids. */
export async function reclaimStaleHandoffs(d: Db, claimedBefore: number, now = Date.now()): Promise<string[]> {
  const rows = await d
    .update(sessions)
    .set({ handoffState: "failed", handoffError: STALE_HANDOFF_ERROR, handoffFinishedAt: now })
    .where(and(eq(sessions.handoffState, "running"), lt(sessions.handoffClaimedAt, claimedBefore)))
    .returning({ id: sessions.id });
  return rows.map((r) => r.id);
}
