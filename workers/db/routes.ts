import { and, eq, isNull, ne, sql } from "drizzle-orm";
import type { Db } from "./client.ts";
import { sessionRoutes, sessions } from "./schema.ts";

/** The session a key routes to, if any (with `boundOnly`, only keys bound on purpose). */
export async function routeFor(d: Db, sessionKey: string, opts: { boundOnly?: boolean } = {}): Promise<string | null> {
  const row = await d.select({ sessionId: sessionRoutes.sessionId, bound: sessionRoutes.bound }).from(sessionRoutes).where(eq(sessionRoutes.sessionKey, sessionKey)).get();
  if (!row || (opts.boundOnly && row.bound !== 1)) return null;
  return row.sessionId;
}

/**
 * Binds a key to a session on purpose (handoff, /resume, /new) in one batch: the route is
 * upserted as bound, and the session that held
 * the key before (if another) ends with reason `session_switch`. Returns that session's id.
 */
export async function bindRoute(d: Db, sessionKey: string, sessionId: string, origin: unknown, now = Date.now()): Promise<string | null> {
  const previous = await routeFor(d, sessionKey);
  const upsert = d
    .insert(sessionRoutes)
    .values({ sessionKey, sessionId, origin: JSON.stringify(origin), bound: 1, updatedAt: now })
    .onConflictDoUpdate({ target: sessionRoutes.sessionKey, set: { sessionId, origin: JSON.stringify(origin), bound: 1, updatedAt: now } });
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
