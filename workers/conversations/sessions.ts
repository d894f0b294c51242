import { and, desc, eq, inArray, isNotNull, isNull, ne, or, sql, type SQL } from "drizzle-orm";
import { modelId } from "../agent/index.ts";
import type { Db } from "../db/client.ts";
import { allOf, anyOf } from "../db/conditions.ts";
import type { SessionSeed } from "../db/seed.ts";
import { sessions, type SessionRow } from "../db/schema.ts";
import { resolveSession, type Resolved } from "../db/sessions.ts";
import { OPERATOR_SOURCES } from "../platforms/names.ts";
import type { SessionSource } from "../platforms/types.ts";
import { isAllowed, settings } from "../settings.ts";

export type { SessionSeed } from "../db/seed.ts";

/** The model name a new session records. */
export function modelName(env: Env): string {
  return modelId(settings(env).model);
}

/** The seed of a session for a platform chat. */
export function seedFor(env: Env, source: SessionSource, key: string): SessionSeed {
  return {
    source: source.platform,
    userId: source.userId,
    chatId: source.chatId,
    chatType: source.chatType,
    threadId: source.threadId ?? null,
    sessionKey: key,
    model: modelName(env),
  };
}

/**
 * Sessions a platform user may `/resume` (and list), wherever they type it:
 * - their own per-user sessions (DMs, and their own session in a group or channel outside
 *   threads) on this platform and on every platform of an account linked to theirs
 *   (`/link`): nobody else's, even in a shared chat;
 * - shared sessions (a thread or topic: one session for everyone in it) only from that
 *   same chat;
 * - CLI and console sessions only when `cliSessions` (the platform's `*_ADMIN_USERS`):
 *   they are the operator's.
 */
function resumableBy(source: SessionSource, opts: { cliSessions: boolean }): SQL {
  const shared = anyOf(isNotNull(sessions.threadId), eq(sessions.chatType, "thread"));
  const perUser = allOf(isNull(sessions.threadId), ne(sessions.chatType, "thread"));
  const account = `${source.platform}:${source.userId}`;
  const person = sql`(SELECT ${account} UNION SELECT pb.account_key FROM linked_accounts pa JOIN linked_accounts pb ON pb.person_id = pa.person_id WHERE pa.account_key = ${account})`;
  const own = allOf(sql`(${sessions.source} || ':' || ${sessions.userId}) IN ${person}`, perUser);
  const sameChat = allOf(eq(sessions.source, source.platform), shared, eq(sessions.chatId, source.chatId));
  const cli = opts.cliSessions ? inArray(sessions.source, [...OPERATOR_SOURCES]) : sql`0`;
  return anyOf(own, sameChat, cli);
}

function scope(env: Env, source: SessionSource): SQL {
  return resumableBy(source, { cliSessions: isAllowed(settings(env).platforms[source.platform].admins, source.userId, source.userAltId) });
}

export function resolveForSource(d: Db, env: Env, source: SessionSource, ref: string): Promise<Resolved> {
  return resolveSession(d, ref, scope(env, source));
}

export async function recentForSource(d: Db, env: Env, source: SessionSource, limit = 5): Promise<SessionRow[]> {
  return d.select().from(sessions).where(scope(env, source)).orderBy(desc(sessions.lastActiveAt)).limit(limit);
}

/** Autocomplete offers at most this many sessions (Discord's limit). */
const MAX_SUGGESTIONS = 25;

/**
 * Sessions to offer while `/resume` is being typed: the same scope as the command, most
 * recently active first, narrowed to those whose id or title contains what is typed.
 */
export async function suggestForSource(d: Db, env: Env, source: SessionSource, query: string): Promise<SessionRow[]> {
  const q = query.trim().toLowerCase();
  const recent = await recentForSource(d, env, source, q ? 100 : MAX_SUGGESTIONS);
  return recent.filter((s) => !q || s.id.toLowerCase().includes(q) || (s.title ?? "").toLowerCase().includes(q)).slice(0, MAX_SUGGESTIONS);
}

/** One line naming a session for chat answers. */
export function describeSession(s: { id: string; title: string | null; source: string; messageCount: number }): string {
  return `${s.id}${s.title ? ` "${s.title}"` : ""} (${s.source}, ${s.messageCount} messages)`;
}
