import { and, eq, getTableColumns, sql } from "drizzle-orm";
import type { StoredMessage, TurnUsage } from "../runtime/index.ts";
import type { Db } from "./client.ts";
import { messages, sessionRoutes, sessions, usage, type SessionRow } from "./schema.ts";

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

// The copy's statements are plain SQL made once from the tables' column names: a D1 copy
// behind every turn built them through drizzle's query builder each time (its largest CPU item).

/** `?, ?, …` for `n` parameters. */
const marks = (n: number) => Array.from({ length: n }, () => "?").join(", ");

const SESSION_KEYS = ["id", ...SESSION_COLUMNS] as const;
const SESSION_UPSERT = `INSERT INTO sessions (${SESSION_KEYS.map((k) => sessions[k].name).join(", ")}) VALUES (${marks(SESSION_KEYS.length)})
  ON CONFLICT (id) DO UPDATE SET ${SESSION_COLUMNS.map((k) => `${sessions[k].name} = excluded.${sessions[k].name}`).join(", ")}`;

/** The session's row as its object has it. */
export function sessionUpsert(d1: D1Database, row: SessionRow): D1PreparedStatement {
  return d1.prepare(SESSION_UPSERT).bind(...SESSION_KEYS.map((k) => row[k] ?? null));
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

/** The transcript columns a copy writes, in the order of {@link messageValues}. */
const MESSAGE_KEYS = [
  "sessionId",
  "localId",
  "role",
  "content",
  "toolCalls",
  "toolCallId",
  "toolName",
  "createdAt",
  "finishReason",
  "tokenCount",
  "inputTokens",
  "outputTokens",
  "model",
  "active",
  "turnId",
  "userKey",
] as const satisfies ReadonlyArray<keyof typeof messages.$inferInsert>;
const MESSAGE_INSERT = `INSERT INTO messages (${MESSAGE_KEYS.map((k) => messages[k].name).join(", ")}) VALUES `;
const MESSAGE_ROW = `(${marks(MESSAGE_KEYS.length)})`;
const MESSAGE_CONFLICT = ` ON CONFLICT (${messages.sessionId.name}, ${messages.localId.name}) DO UPDATE SET active = excluded.active, content = excluded.content`;

function messageValues(sessionId: string, r: StoredMessage): Array<string | number | null> {
  return [
    sessionId,
    r.id,
    r.message.role,
    r.message.content,
    r.message.tool_calls ? JSON.stringify(r.message.tool_calls) : null,
    r.message.tool_call_id ?? null,
    r.message.name ?? null,
    r.createdAt,
    r.message.finish_reason ?? null,
    r.usage ? r.usage.output : null,
    r.usage ? r.usage.input : null,
    r.usage ? r.usage.output : null,
    r.model,
    r.active ? 1 : 0,
    r.turnId,
    r.userKey,
  ];
}

/** Transcript rows as the object stored them (keyed by its own ids), as statements within D1's parameter limit. */
export function messagesUpsert(d1: D1Database, sessionId: string, rows: readonly StoredMessage[]): D1PreparedStatement[] {
  return chunks(rows, MESSAGE_COLUMNS).map((part) =>
    d1.prepare(`${MESSAGE_INSERT}${part.map(() => MESSAGE_ROW).join(", ")}${MESSAGE_CONFLICT}`).bind(...part.flatMap((r) => messageValues(sessionId, r))),
  );
}

const SUMMARY_UPSERT = `INSERT INTO summaries (session_id, summary, folded_through, updated_at) VALUES (?, ?, ?, ?)
  ON CONFLICT (session_id) DO UPDATE SET summary = excluded.summary, folded_through = excluded.folded_through, updated_at = excluded.updated_at`;

/** A session's rolling summary as its object has it. */
export function summaryUpsert(d1: D1Database, s: { sessionId: string; summary: string; foldedThrough: number; updatedAt: number }): D1PreparedStatement {
  return d1.prepare(SUMMARY_UPSERT).bind(s.sessionId, s.summary, s.foldedThrough, s.updatedAt);
}

const USAGE_INSERT = "INSERT INTO usage (turn_id, session_id, user_key, day, input_tokens, output_tokens, created_at) VALUES ";
const USAGE_ROW = `(${marks(7)})`;
// A turn id another session has is never that session's to change (an import reused one).
const USAGE_CONFLICT =
  " ON CONFLICT (turn_id) DO UPDATE SET input_tokens = excluded.input_tokens, output_tokens = excluded.output_tokens WHERE usage.session_id = excluded.session_id";

/** Turns' token counts as their object recorded them, as statements within D1's parameter limit. */
export function usageUpsert(d1: D1Database, rows: readonly TurnUsage[]): D1PreparedStatement[] {
  return chunks(rows, USAGE_COLUMNS).map((part) =>
    d1
      .prepare(`${USAGE_INSERT}${part.map(() => USAGE_ROW).join(", ")}${USAGE_CONFLICT}`)
      .bind(...part.flatMap((u) => [u.turnId, u.session, u.userKey, u.day, u.input, u.output, u.createdAt])),
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
