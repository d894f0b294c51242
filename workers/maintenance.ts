import { lt } from "drizzle-orm";
import { db } from "./db/client.ts";
import { webhookDeliveries } from "./db/schema.ts";

/** Delivery ids are kept long past any platform's retry window, then pruned. */
export const DELIVERY_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;

/** Cron work (every minute): prunes old webhook delivery ids. */
export async function runMaintenance(env: Env, now: number): Promise<{ prunedDeliveries: number }> {
  const res = await db(env).delete(webhookDeliveries).where(lt(webhookDeliveries.receivedAt, now - DELIVERY_RETENTION_MS)).run();
  return { prunedDeliveries: res.meta.changes ?? 0 };
}
