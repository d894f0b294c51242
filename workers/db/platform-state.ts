import { and, eq, isNull, lt, or } from "drizzle-orm";
import type { Db } from "./client.ts";
import { homeChannels, refusalNotices, sessionRoutes, webhookDeliveries } from "./schema.ts";

/** A platform's home channel as stored by /sethome. */
export interface StoredHome {
  chatId: string;
  threadId: string | null;
  chatName: string | null;
  setBy: string | null;
  updatedAt: number;
}

export async function storedHome(d: Db, platform: string): Promise<StoredHome | null> {
  const row = await d.select().from(homeChannels).where(eq(homeChannels.platform, platform)).get();
  return row ? { chatId: row.chatId, threadId: row.threadId, chatName: row.chatName, setBy: row.setBy, updatedAt: row.updatedAt } : null;
}

export async function setHome(d: Db, platform: string, home: Omit<StoredHome, "updatedAt">, now = Date.now()): Promise<void> {
  await d
    .insert(homeChannels)
    .values({ platform, ...home, updatedAt: now })
    .onConflictDoUpdate({ target: homeChannels.platform, set: { ...home, updatedAt: now } });
}

/** What the intake should do with a delivery it has seen before, or not. */
export type DeliveryState = "new" | "unaccepted" | "accepted";

/**
 * Records a delivery id (atomically: the first writer wins) and, in the same round trip,
 * looks up the route of `sessionKey`. "unaccepted" means an earlier attempt recorded the
 * delivery but never handed it over; it may be handed over again (the object dedupes).
 */
export async function recordDelivery(d: Db, platform: string, deliveryId: string, sessionKey: string, now = Date.now()): Promise<{ state: DeliveryState; sessionId: string | null }> {
  const [inserted, existing, route] = await d.batch([
    d.insert(webhookDeliveries).values({ platform, deliveryId, receivedAt: now }).onConflictDoNothing().returning({ id: webhookDeliveries.deliveryId }),
    d
      .select({ acceptedAt: webhookDeliveries.acceptedAt })
      .from(webhookDeliveries)
      .where(and(eq(webhookDeliveries.platform, platform), eq(webhookDeliveries.deliveryId, deliveryId))),
    d.select({ sessionId: sessionRoutes.sessionId }).from(sessionRoutes).where(eq(sessionRoutes.sessionKey, sessionKey)),
  ]);
  const state: DeliveryState = inserted.length > 0 ? "new" : existing[0]?.acceptedAt ? "accepted" : "unaccepted";
  return { state, sessionId: route[0]?.sessionId ?? null };
}

export async function markDeliveryAccepted(d: Db, platform: string, deliveryId: string, sessionId: string | null, now = Date.now()): Promise<void> {
  await d
    .update(webhookDeliveries)
    .set({ acceptedAt: now, sessionId })
    .where(and(eq(webhookDeliveries.platform, platform), eq(webhookDeliveries.deliveryId, deliveryId)));
}

/** At most one refusal per chat per this long. */
export const REFUSAL_INTERVAL_MS = 10 * 60 * 1000;

/** True (once per chat per 10 minutes) when an unauthorised user should be told no. */
export async function claimRefusal(d: Db, platform: string, chatId: string, now = Date.now()): Promise<boolean> {
  const rows = await d
    .insert(refusalNotices)
    .values({ platform, chatId, sentAt: now })
    .onConflictDoUpdate({
      target: [refusalNotices.platform, refusalNotices.chatId],
      set: { sentAt: now },
      setWhere: or(lt(refusalNotices.sentAt, now - REFUSAL_INTERVAL_MS), isNull(refusalNotices.sentAt)),
    })
    .returning({ sentAt: refusalNotices.sentAt });
  return rows.length > 0;
}
