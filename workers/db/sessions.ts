import { and, desc, eq, or, sql, type SQL } from "drizzle-orm";
import type { Db } from "./client.ts";
import { newSessionId } from "./ids.ts";
import { sessions, type SessionRow } from "./schema.ts";

/** Fields a new session may carry. */
export interface NewSession {
  source: string;
  title?: string | null | undefined;
  userId?: string | null;
  chatId?: string | null;
  chatType?: string | null;
  threadId?: string | null;
  sessionKey?: string | null;
  model?: string | null;
  parentSessionId?: string | null;
}

export async function createSession(d: Db, input: NewSession, now = Date.now()): Promise<SessionRow> {
  const [row] = await d
    .insert(sessions)
    .values({
      id: newSessionId(now),
      source: input.source,
      title: input.title ?? null,
      userId: input.userId ?? null,
      chatId: input.chatId ?? null,
      chatType: input.chatType ?? null,
      threadId: input.threadId ?? null,
      sessionKey: input.sessionKey ?? null,
      model: input.model ?? null,
      parentSessionId: input.parentSessionId ?? null,
      startedAt: now,
      lastActiveAt: now,
    })
    .returning();
  return row!;
}

export async function getSession(d: Db, id: string): Promise<SessionRow | null> {
  return (await d.select().from(sessions).where(eq(sessions.id, id)).get()) ?? null;
}

/** Newest first: most recently active, then most recently started. */
export async function listSessions(d: Db, opts: { limit: number; source?: string | undefined }): Promise<SessionRow[]> {
  const q = d.select().from(sessions);
  const filtered = opts.source ? q.where(eq(sessions.source, opts.source)) : q;
  return filtered.orderBy(desc(sessions.lastActiveAt), desc(sessions.startedAt)).limit(opts.limit);
}

/** Result of resolving a user's reference to a session. */
export type Resolved = { kind: "found"; session: SessionRow } | { kind: "none" } | { kind: "ambiguous"; matches: SessionRow[] };

/** Longest reference looked up at all (ids are 22 characters, titles at most 200). */
export const MAX_REF_LENGTH = 200;
/** D1 refuses LIKE patterns over 50 bytes; longer prefixes are matched exactly only. */
const MAX_LIKE_BYTES = 50;

/**
 * Resolves `latest`, an exact id, an exact title (the most recent one wins), or a unique id
 * prefix / title prefix. `scope` narrows the candidates (a platform user's own sessions).
 */
export async function resolveSession(d: Db, ref: string, scope?: SQL): Promise<Resolved> {
  const r = ref.trim();
  if (!r || r.length > MAX_REF_LENGTH) return { kind: "none" };
  const order = [desc(sessions.lastActiveAt), desc(sessions.startedAt)] as const;
  const where = (c: SQL | undefined) => (scope ? and(scope, c) : c);
  if (r === "latest") {
    const row = await d.select().from(sessions).where(scope).orderBy(...order).limit(1).get();
    return row ? { kind: "found", session: row } : { kind: "none" };
  }
  const exact = await d
    .select()
    .from(sessions)
    .where(where(or(eq(sessions.id, r), eq(sessions.title, r))))
    .orderBy(...order)
    .limit(1)
    .get();
  if (exact) return { kind: "found", session: exact };
  // LIKE has no escape character unless told so: without ESCAPE the backslashes would be
  // taken literally, and no id (they all contain "_") would ever match a prefix.
  const pattern = `${r.replace(/[\\%_]/g, (ch) => `\\${ch}`)}%`;
  if (new TextEncoder().encode(pattern).length > MAX_LIKE_BYTES) return { kind: "none" };
  const startsWith = (col: typeof sessions.id | typeof sessions.title) => sql`${col} LIKE ${pattern} ESCAPE '\\'`;
  const matches = await d
    .select()
    .from(sessions)
    .where(where(or(startsWith(sessions.id), startsWith(sessions.title))))
    .orderBy(...order)
    .limit(5);
  if (matches.length === 1) return { kind: "found", session: matches[0]! };
  return matches.length === 0 ? { kind: "none" } : { kind: "ambiguous", matches };
}

/** The handoff part of a session, as the API shows it; null when none was ever requested. */
export function handoffJson(row: SessionRow) {
  if (!row.handoffState) return null;
  return {
    state: row.handoffState,
    platform: row.handoffPlatform,
    error: row.handoffError,
    requested_at: row.handoffRequestedAt,
    claimed_at: row.handoffClaimedAt,
    finished_at: row.handoffFinishedAt,
    destination: row.handoffDestChatId ? { chat_id: row.handoffDestChatId, thread_id: row.handoffDestThreadId } : null,
  };
}

/** A session as the API shows it. */
export function sessionJson(row: SessionRow) {
  return {
    id: row.id,
    title: row.title,
    source: row.source,
    running: row.activeTurnId !== null,
    handoff: handoffJson(row),
    model: row.model,
    session_key: row.sessionKey,
    chat_id: row.chatId,
    chat_type: row.chatType,
    thread_id: row.threadId,
    user_id: row.userId,
    parent_session_id: row.parentSessionId,
    started_at: row.startedAt,
    last_active_at: row.lastActiveAt,
    ended_at: row.endedAt,
    end_reason: row.endReason,
    message_count: row.messageCount,
    tool_call_count: row.toolCallCount,
    input_tokens: row.inputTokens,
    output_tokens: row.outputTokens,
  };
}

export type SessionJson = ReturnType<typeof sessionJson>;

/** Clears a session's running flag (only if it still belongs to `turnId`, when given). */
export async function clearRunningFlag(d: Db, sessionId: string, turnId?: string): Promise<void> {
  await d
    .update(sessions)
    .set({ activeTurnId: null, turnStartedAt: null })
    .where(turnId ? and(eq(sessions.id, sessionId), eq(sessions.activeTurnId, turnId)) : eq(sessions.id, sessionId));
}
