import { and, desc, eq, isNotNull, isNull, ne, or, sql, type SQL } from "drizzle-orm";
import { OFFLINE_MODEL_ID } from "../agent/index.ts";
import { isAllowed, modelConfig } from "../config.ts";
import { platformSettings } from "./registry.ts";
import type { Db } from "../db/client.ts";
import { newSessionId } from "../db/ids.ts";
import { bindRoute, routeFor } from "../db/routes.ts";
import { sessionRoutes, sessions, type SessionRow } from "../db/schema.ts";
import { resolveSession, type Resolved } from "../db/sessions.ts";
import { buildSessionKey } from "./session-key.ts";
import type { SessionSource } from "./types.ts";

/** The model name a new session records. */
export function modelName(env: Env): string {
  const cfg = modelConfig(env);
  return cfg.baseUrl ? (cfg.model ?? "gpt-4o-mini") : OFFLINE_MODEL_ID;
}

function sessionValues(env: Env, source: SessionSource, key: string, id: string, now: number) {
  return {
    id,
    source: source.platform,
    userId: source.userId,
    chatId: source.chatId,
    chatType: source.chatType,
    threadId: source.threadId ?? null,
    sessionKey: key,
    model: modelName(env),
    startedAt: now,
    lastActiveAt: now,
  };
}

/**
 * The session a platform message belongs to: its key's route, or a new session bound to
 * the key. Two first messages racing for one key end up in the same session.
 */
export async function sessionForSource(d: Db, env: Env, source: SessionSource, known?: string | null, now = Date.now()): Promise<{ sessionId: string; key: string; created: boolean }> {
  const key = buildSessionKey(source);
  const existing = known === undefined ? await routeFor(d, key) : known;
  if (existing) return { sessionId: existing, key, created: false };
  const id = newSessionId(now);
  const [, won] = await d.batch([
    d.insert(sessions).values(sessionValues(env, source, key, id, now)),
    d
      .insert(sessionRoutes)
      // A Slack thread the bot was asked into goes on without mentions; a Telegram topic does not.
      .values({ sessionKey: key, sessionId: id, origin: JSON.stringify(source), bound: source.platform === "slack" && source.threadId ? 1 : 0, updatedAt: now })
      .onConflictDoNothing()
      .returning({ sessionId: sessionRoutes.sessionId }),
  ]);
  if (won.length > 0) return { sessionId: id, key, created: true };
  // Another first message bound the key a moment earlier: use its session, drop ours.
  await d.delete(sessions).where(eq(sessions.id, id));
  return { sessionId: (await routeFor(d, key))!, key, created: false };
}

/** A fresh session for a key (the /new command); the key's previous session ends. */
export async function newSessionForSource(d: Db, env: Env, source: SessionSource, now = Date.now()): Promise<{ sessionId: string; previous: string | null }> {
  const key = buildSessionKey(source);
  const id = newSessionId(now);
  await d.insert(sessions).values(sessionValues(env, source, key, id, now));
  const previous = await bindRoute(d, key, id, source, now);
  return { sessionId: id, previous };
}

/**
 * Sessions a platform user may `/resume` (and list), wherever they type it:
 * - their own per-user sessions on this platform (DMs, and their own session in a group
 *   or channel outside threads): nobody else's, even in a shared chat;
 * - shared sessions (a thread or topic: one session for everyone in it) only from that
 *   same chat;
 * - CLI sessions only when `cliSessions` (the platform's `*_ADMIN_USERS`): a CLI session
 *   is the operator's.
 */
export function resumableBy(source: SessionSource, opts: { cliSessions: boolean }): SQL {
  const shared = or(isNotNull(sessions.threadId), eq(sessions.chatType, "thread"))!;
  const perUser = and(isNull(sessions.threadId), ne(sessions.chatType, "thread"))!;
  const own = and(eq(sessions.source, source.platform), eq(sessions.userId, source.userId), perUser);
  const sameChat = and(eq(sessions.source, source.platform), shared, eq(sessions.chatId, source.chatId));
  const cli = opts.cliSessions ? eq(sessions.source, "cli") : sql`0`;
  return or(own, sameChat, cli)!;
}

/** Whether this user may resume CLI sessions (the platform's `*_ADMIN_USERS`). */
function cliSessionsFor(env: Env, source: SessionSource): boolean {
  return isAllowed(platformSettings(env, source.platform).admins, source.userId);
}

export async function resolveForSource(d: Db, env: Env, source: SessionSource, ref: string): Promise<Resolved> {
  return resolveSession(d, ref, resumableBy(source, { cliSessions: cliSessionsFor(env, source) }));
}

export async function recentForSource(d: Db, env: Env, source: SessionSource, limit = 5): Promise<SessionRow[]> {
  return d.select().from(sessions).where(resumableBy(source, { cliSessions: cliSessionsFor(env, source) })).orderBy(desc(sessions.lastActiveAt)).limit(limit);
}
