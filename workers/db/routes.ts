import { and, eq, isNull, ne, sql } from "drizzle-orm";
import type { Db } from "./client.ts";
import { sessionRoutes, sessions } from "./schema.ts";

/** The session a key is bound to, if any. */
export async function routeFor(d: Db, sessionKey: string): Promise<string | null> {
  const row = await d.select({ sessionId: sessionRoutes.sessionId }).from(sessionRoutes).where(eq(sessionRoutes.sessionKey, sessionKey)).get();
  return row?.sessionId ?? null;
}

/**
 * Binds a key to a session in one batch: the route is upserted, and the session that held
 * the key before (if another) ends with reason `session_switch`. Returns that session's id.
 */
export async function bindRoute(d: Db, sessionKey: string, sessionId: string, origin: unknown, now = Date.now()): Promise<string | null> {
  const previous = await routeFor(d, sessionKey);
  const upsert = d
    .insert(sessionRoutes)
    .values({ sessionKey, sessionId, origin: JSON.stringify(origin), updatedAt: now })
    .onConflictDoUpdate({ target: sessionRoutes.sessionKey, set: { sessionId, origin: JSON.stringify(origin), updatedAt: now } });
  if (previous && previous !== sessionId) {
    await d.batch([
      upsert,
      d
        .update(sessions)
        .set({ endedAt: now, endReason: "session_switch" })
        .where(and(eq(sessions.id, previous), isNull(sessions.endedAt), ne(sessions.id, sessionId))),
      d.update(sessions).set({ sessionKey, endedAt: null, endReason: null, lastActiveAt: sql`MAX(${sessions.lastActiveAt}, ${now})` }).where(eq(sessions.id, sessionId)),
    ]);
    return previous;
  }
  await d.batch([upsert, d.update(sessions).set({ sessionKey, endedAt: null, endReason: null }).where(eq(sessions.id, sessionId))]);
  return previous;
}
