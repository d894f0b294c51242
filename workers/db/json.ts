import type { AttachmentRecord } from "../attachments/index.ts";
import { chatLink } from "../platforms/links.ts";
import type { AttachmentStore, StoredMessage } from "../runtime/index.ts";
import type { SessionRow } from "./schema.ts";

/** The handoff part of a session, as the API shows it; null when none was ever requested. */
export function handoffJson(row: SessionRow) {
  if (!row.handoffState) return null;
  return {
    state: row.handoffState as "pending" | "running" | "completed" | "failed",
    platform: row.handoffPlatform,
    /** The platform of the chat it was asked for in (`/handoff` there); null: the CLI, console or API. */
    from: row.handoffFrom ?? null,
    error: row.handoffError,
    requested_at: row.handoffRequestedAt,
    claimed_at: row.handoffClaimedAt,
    finished_at: row.handoffFinishedAt,
    destination: row.handoffDestChatId
      ? {
          chat_id: row.handoffDestChatId,
          thread_id: row.handoffDestThreadId,
          url: row.handoffDestUrl ?? chatLink(row.handoffPlatform ?? "", row.handoffDestChatId, row.handoffDestThreadId ?? null),
        }
      : null,
  };
}

export type HandoffJson = ReturnType<typeof handoffJson>;

/** A session as the API shows it. `running` comes from the session's object when it is asked. */
export function sessionJson(row: SessionRow, running = row.activeTurnId !== null) {
  return {
    id: row.id,
    title: row.title,
    source: row.source,
    running,
    instructions: row.instructions ?? null,
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

/** A transcript message as the API shows it. */
export function messageJson(r: StoredMessage) {
  return {
    id: r.id,
    role: r.message.role,
    content: r.message.content,
    tool_calls: r.message.tool_calls ?? null,
    tool_call_id: r.message.tool_call_id ?? null,
    tool_name: r.message.name ?? null,
    finish_reason: r.message.finish_reason ?? null,
    created_at: r.createdAt,
    token_count: r.usage ? r.usage.output : null,
    input_tokens: r.usage ? r.usage.input : null,
    output_tokens: r.usage ? r.usage.output : null,
    model: r.model,
  };
}

/** An attachment of a user message, as the API lists it (where its bytes are kept is not shown). */
export function attachmentJson(a: AttachmentRecord) {
  return { kind: a.kind, name: a.name, mime: a.mime, size: a.size, seconds: a.seconds, status: a.status, kept: a.key !== null, detail: a.detail };
}

/** A transcript message with what came with it: a turn's user message lists its attachments. */
export function withAttachmentsJson(r: StoredMessage, store: Pick<AttachmentStore, "forTurn">) {
  const attachments = r.message.role === "user" && r.turnId ? store.forTurn(r.turnId).map(attachmentJson) : [];
  return { ...messageJson(r), attachments };
}

export type MessageJson = ReturnType<typeof withAttachmentsJson>;
