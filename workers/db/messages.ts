import { and, asc, eq, sql } from "drizzle-orm";
import type { ChatMessage, ToolCall, Usage } from "../agent/index.ts";
import type { Db } from "./client.ts";
import { titleFrom } from "./ids.ts";
import { messages, sessions, type MessageRow } from "./schema.ts";

/** Extra facts stored with a message. */
export interface MessageMeta {
  turnId?: string | undefined;
  usage?: Usage | undefined;
  platformMessageId?: string | undefined;
}

/** A message waiting to be written, with its facts. */
export interface PendingMessage {
  message: ChatMessage;
  meta?: MessageMeta;
  at: number;
}

/**
 * Appends messages and updates the session's counters, activity time and (from the first
 * user message) its title, plus any `sessionPatch` columns, in one batch so they commit
 * together. Returns the new message ids, in order.
 */
export async function appendMessages(
  d: Db,
  sessionId: string,
  items: readonly PendingMessage[],
  sessionPatch: Partial<typeof sessions.$inferInsert> = {},
): Promise<number[]> {
  if (items.length === 0 && Object.keys(sessionPatch).length === 0) return [];
  let calls = 0;
  let input = 0;
  let output = 0;
  let title: string | null = null;
  for (const { message: m, meta } of items) {
    calls += m.tool_calls?.length ?? 0;
    input += meta?.usage?.input ?? 0;
    output += meta?.usage?.output ?? 0;
    if (!title && m.role === "user" && m.content) title = titleFrom(m.content);
  }
  const last = items.length > 0 ? items[items.length - 1]!.at : Date.now();
  const update = d
    .update(sessions)
    .set({
      ...(items.length > 0
        ? {
            messageCount: sql`${sessions.messageCount} + ${items.length}`,
            toolCallCount: sql`${sessions.toolCallCount} + ${calls}`,
            inputTokens: sql`${sessions.inputTokens} + ${input}`,
            outputTokens: sql`${sessions.outputTokens} + ${output}`,
            lastActiveAt: last,
          }
        : {}),
      ...(title ? { title: sql`COALESCE(${sessions.title}, ${title})` } : {}),
      ...sessionPatch,
    })
    .where(eq(sessions.id, sessionId));
  if (items.length === 0) {
    await update.run();
    return [];
  }
  const insert = d
    .insert(messages)
    .values(
      items.map(({ message: m, meta, at }) => ({
        sessionId,
        role: m.role,
        content: m.content,
        toolCalls: m.tool_calls ? JSON.stringify(m.tool_calls) : null,
        toolCallId: m.tool_call_id ?? null,
        toolName: m.name ?? null,
        createdAt: at,
        finishReason: m.finish_reason ?? null,
        tokenCount: meta?.usage ? meta.usage.output : null,
        platformMessageId: meta?.platformMessageId ?? null,
        turnId: meta?.turnId ?? null,
      })),
    )
    .returning({ id: messages.id });
  const [inserted] = await d.batch([insert, update]);
  return inserted.map((r) => r.id);
}

function parseCalls(json: string | null): ToolCall[] | undefined {
  if (!json) return undefined;
  try {
    const v = JSON.parse(json) as unknown;
    return Array.isArray(v) && v.length > 0 ? (v as ToolCall[]) : undefined;
  } catch {
    return undefined;
  }
}

/** A stored row as a transcript message (unrepaired: callers repair before use). */
export function toChatMessage(r: MessageRow): ChatMessage {
  const m: ChatMessage = { role: r.role as ChatMessage["role"], content: r.content };
  const calls = parseCalls(r.toolCalls);
  if (calls) m.tool_calls = calls;
  if (r.toolCallId) m.tool_call_id = r.toolCallId;
  if (r.toolName) m.name = r.toolName;
  if (r.finishReason) m.finish_reason = r.finishReason as ChatMessage["finish_reason"];
  return m;
}

export async function activeMessageRows(d: Db, sessionId: string): Promise<MessageRow[]> {
  return d
    .select()
    .from(messages)
    .where(and(eq(messages.sessionId, sessionId), eq(messages.active, 1)))
    .orderBy(asc(messages.id));
}

/** A message as the API shows it. */
export function messageJson(r: MessageRow) {
  return {
    id: r.id,
    role: r.role,
    content: r.content,
    tool_calls: parseCalls(r.toolCalls) ?? null,
    tool_call_id: r.toolCallId,
    tool_name: r.toolName,
    finish_reason: r.finishReason,
    created_at: r.createdAt,
    token_count: r.tokenCount,
    platform_message_id: r.platformMessageId,
  };
}

/** Id of the user message that opened `turnId`, if it was stored. */
export async function turnUserMessageId(d: Db, sessionId: string, turnId: string): Promise<number | null> {
  const row = await d
    .select({ id: messages.id })
    .from(messages)
    .where(and(eq(messages.sessionId, sessionId), eq(messages.turnId, turnId), eq(messages.role, "user")))
    .get();
  return row?.id ?? null;
}

/**
 * The session's transcript in one round trip, or null when there is no such session.
 * Used by a SessionAgent when it first needs its session.
 */
export async function loadSessionTranscript(d: Db, sessionId: string): Promise<ChatMessage[] | null> {
  const [found, rows] = await d.batch([
    d.select({ id: sessions.id }).from(sessions).where(eq(sessions.id, sessionId)).limit(1),
    d
      .select()
      .from(messages)
      .where(and(eq(messages.sessionId, sessionId), eq(messages.active, 1)))
      .orderBy(asc(messages.id)),
  ]);
  return found.length === 0 ? null : rows.map(toChatMessage);
}
