import { and, eq, getTableColumns, sql } from "drizzle-orm";
import type { StoredMessage, TurnUsage } from "../runtime/index.ts";
import type { Db } from "./client.ts";
import { messages, sessionRoutes, sessions, summaries, usage, type SessionRow } from "./schema.ts";

/**
 * The statements with which the objects copy their state to D1, behind their own storage.
 * All are idempotent upserts, so a retried copy changes nothing twice.
 */

const SESSION_COLUMNS = [
  "source",
  "userId",
  "chatId",
  "chatType",
  "threadId",
  "sessionKey",
  "title",
  "model",
  "parentSessionId",
  "startedAt",
  "endedAt",
  "lastActiveAt",
  "endReason",
  "messageCount",
  "toolCallCount",
  "inputTokens",
  "outputTokens",
  "activeTurnId",
  "turnStartedAt",
  "handoffState",
  "handoffPlatform",
  "handoffError",
  "handoffRequestedAt",
  "handoffClaimedAt",
  "handoffFinishedAt",
  "handoffChatId",
  "handoffThread",
  "handoffDestChatId",
  "handoffDestThreadId",
  "handoffDestUrl",
  "handoffFrom",
] as const satisfies ReadonlyArray<keyof SessionRow>;

/** The session's row as its object has it. */
export function sessionUpsert(d: Db, row: SessionRow) {
  const values = Object.fromEntries([["id", row.id], ...SESSION_COLUMNS.map((k) => [k, row[k]])]) as SessionRow;
  const set = Object.fromEntries(SESSION_COLUMNS.map((k) => [k, sql.raw(`excluded.${sessions[k].name}`)]));
  return d.insert(sessions).values(values).onConflictDoUpdate({ target: sessions.id, set });
}

/** D1 binds at most this many parameters per statement. */
export const D1_MAX_PARAMS = 100;
// Counted from the tables, so a new column can never push a statement over the limit.
const MESSAGE_COLUMNS = Object.keys(getTableColumns(messages)).length;
const USAGE_COLUMNS = Object.keys(getTableColumns(usage)).length;

function chunks<T>(rows: readonly T[], columns: number): T[][] {
  const per = Math.max(1, Math.floor(D1_MAX_PARAMS / columns));
  const out: T[][] = [];
  for (let i = 0; i < rows.length; i += per) out.push(rows.slice(i, i + per));
  return out;
}

/** Transcript rows as the object stored them (keyed by its own ids), as statements within D1's parameter limit. */
export function messagesUpsert(d: Db, sessionId: string, rows: readonly StoredMessage[]) {
  return chunks(rows, MESSAGE_COLUMNS).map((part) => messagesStatement(d, sessionId, part));
}

function messagesStatement(d: Db, sessionId: string, rows: readonly StoredMessage[]) {
  return d
    .insert(messages)
    .values(
      rows.map((r) => ({
        sessionId,
        localId: r.id,
        role: r.message.role,
        content: r.message.content,
        toolCalls: r.message.tool_calls ? JSON.stringify(r.message.tool_calls) : null,
        toolCallId: r.message.tool_call_id ?? null,
        toolName: r.message.name ?? null,
        createdAt: r.createdAt,
        finishReason: r.message.finish_reason ?? null,
        tokenCount: r.usage ? r.usage.output : null,
        inputTokens: r.usage ? r.usage.input : null,
        outputTokens: r.usage ? r.usage.output : null,
        model: r.model,
        active: r.active ? 1 : 0,
        turnId: r.turnId,
        userKey: r.userKey,
      })),
    )
    .onConflictDoUpdate({ target: [messages.sessionId, messages.localId], set: { active: sql`excluded.active`, content: sql`excluded.content` } });
}

/** A session's rolling summary as its object has it. */
export function summaryUpsert(d: Db, s: { sessionId: string; summary: string; foldedThrough: number; updatedAt: number }) {
  return d
    .insert(summaries)
    .values(s)
    .onConflictDoUpdate({ target: summaries.sessionId, set: { summary: s.summary, foldedThrough: s.foldedThrough, updatedAt: s.updatedAt } });
}

/** Turns' token counts as their object recorded them, as statements within D1's parameter limit. */
export function usageUpsert(d: Db, rows: readonly TurnUsage[]) {
  return chunks(rows, USAGE_COLUMNS).map((part) => usageStatement(d, part));
}

function usageStatement(d: Db, rows: readonly TurnUsage[]) {
  return (
    d
      .insert(usage)
      .values(
        rows.map((u) => ({
          turnId: u.turnId,
          sessionId: u.session,
          userKey: u.userKey,
          day: u.day,
          inputTokens: u.input,
          outputTokens: u.output,
          createdAt: u.createdAt,
        })),
      )
      // A turn id another session has is never that session's to change (an import reused one).
      .onConflictDoUpdate({
        target: usage.turnId,
        set: { inputTokens: sql`excluded.input_tokens`, outputTokens: sql`excluded.output_tokens` },
        setWhere: sql`${usage.sessionId} = excluded.session_id`,
      })
  );
}

/** A key's binding as its Inbox has it. */
export function routeUpsert(d: Db, route: { sessionKey: string; sessionId: string; origin: unknown; bound: boolean; updatedAt: number }) {
  const values = {
    sessionKey: route.sessionKey,
    sessionId: route.sessionId,
    origin: JSON.stringify(route.origin),
    bound: route.bound ? 1 : 0,
    updatedAt: route.updatedAt,
  };
  return d
    .insert(sessionRoutes)
    .values(values)
    .onConflictDoUpdate({
      target: sessionRoutes.sessionKey,
      set: { sessionId: values.sessionId, origin: values.origin, bound: values.bound, updatedAt: values.updatedAt },
    });
}

/** Removes a key's binding, if it still points at `sessionId`. */
export function routeDelete(d: Db, sessionKey: string, sessionId: string) {
  return d.delete(sessionRoutes).where(and(eq(sessionRoutes.sessionKey, sessionKey), eq(sessionRoutes.sessionId, sessionId)));
}
