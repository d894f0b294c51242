import type { SessionSource } from "./types.ts";

/** Per-user splitting of shared chats (SPEC section 2). */
export interface KeyOptions {
  /** Groups and channels: one session per user outside threads (default on). */
  groupSessionsPerUser?: boolean;
  /** Threads: one session per user (default off: a thread is one shared session). */
  threadSessionsPerUser?: boolean;
}

/**
 * `agent:main:<platform>:<chat_type>[:<scope>][:<chat_id>]` and then, for DMs,
 * `[:<user_id>][:<thread_id>]` (the user only when there is no chat id), else
 * `[:<thread_id>][:<user_id>]`. Shared chats add the user when `groupSessionsPerUser` and
 * the message is not in a thread; in a thread only when `threadSessionsPerUser` too, so by
 * default a thread is one shared session. A source's scope (a Slack workspace) follows the
 * chat type.
 */
export function buildSessionKey(src: Omit<SessionSource, "userId"> & { userId?: string | null }, opts: KeyOptions = {}): string {
  const groupPerUser = opts.groupSessionsPerUser ?? true;
  const threadPerUser = opts.threadSessionsPerUser ?? false;
  const parts = ["agent", "main", src.platform, src.chatType];
  if (src.scopeId) parts.push(src.scopeId);
  if (src.chatId) parts.push(src.chatId);
  const thread = src.threadId || null;
  if (src.chatType === "dm") {
    if (!src.chatId && src.userId) parts.push(src.userId);
    if (thread) parts.push(thread);
  } else {
    if (thread) parts.push(thread);
    const perUser = groupPerUser && (!thread || threadPerUser);
    if (perUser && src.userId) parts.push(src.userId);
  }
  return parts.join(":");
}

/** The platform a session key belongs to (`agent:main:<platform>:…`), or null. */
export function platformOfKey(key: string): string | null {
  return /^agent:[^:]+:([^:]+):/.exec(key)?.[1] ?? null;
}
