import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

/** Times are epoch milliseconds throughout. */

/** One conversation, wherever it started (cli, telegram, discord, slack). */
export const sessions = sqliteTable(
  "sessions",
  {
    id: text("id").primaryKey(),
    source: text("source").notNull(),
    userId: text("user_id"),
    chatId: text("chat_id"),
    chatType: text("chat_type"),
    threadId: text("thread_id"),
    sessionKey: text("session_key"),
    title: text("title"),
    model: text("model"),
    parentSessionId: text("parent_session_id"),
    startedAt: integer("started_at").notNull(),
    endedAt: integer("ended_at"),
    lastActiveAt: integer("last_active_at").notNull(),
    endReason: text("end_reason"),
    messageCount: integer("message_count").notNull().default(0),
    toolCallCount: integer("tool_call_count").notNull().default(0),
    inputTokens: integer("input_tokens").notNull().default(0),
    outputTokens: integer("output_tokens").notNull().default(0),
    /** Set by the session's SessionAgent while a turn runs; null when idle. */
    activeTurnId: text("active_turn_id"),
    turnStartedAt: integer("turn_started_at"),
    /** Handoff state machine (SPEC section 4): null, pending, running, completed, failed. */
    handoffState: text("handoff_state"),
    handoffPlatform: text("handoff_platform"),
    handoffError: text("handoff_error"),
    handoffRequestedAt: integer("handoff_requested_at"),
    handoffClaimedAt: integer("handoff_claimed_at"),
    handoffFinishedAt: integer("handoff_finished_at"),
    /** Requested destination chat (null: the platform's home channel). */
    handoffChatId: text("handoff_chat_id"),
    /** 1: open a fresh thread in the destination; 0: post in the chat itself. */
    handoffThread: integer("handoff_thread").notNull().default(1),
    handoffDestChatId: text("handoff_dest_chat_id"),
    handoffDestThreadId: text("handoff_dest_thread_id"),
    /** A web link to the destination, when the platform gave what one needs (a Discord thread's server). */
    handoffDestUrl: text("handoff_dest_url"),
    /** The platform of the chat a handoff was asked for in (`/handoff` in a chat); null: the CLI, console or API. */
    handoffFrom: text("handoff_from"),
    /** The session's own instructions, added to the agent's (PATCH /v1/sessions/:id, /instructions). */
    instructions: text("instructions"),
  },
  (t) => [
    index("sessions_last_active_idx").on(t.lastActiveAt),
    index("sessions_key_idx").on(t.sessionKey),
    index("sessions_title_idx").on(t.title),
    index("sessions_source_user_idx").on(t.source, t.userId),
    // Sessions with a turn in flight, for the cron safety net.
    index("sessions_running_idx").on(t.turnStartedAt).where(sql`active_turn_id IS NOT NULL`),
    // Finds pending/running handoffs without scanning every session.
    index("sessions_handoff_open_idx").on(t.handoffState, t.handoffRequestedAt).where(sql`handoff_state IN ('pending', 'running')`),
  ],
);

/**
 * Role-aware transcript: one row per message, oldest first by id. A copy of what each
 * SessionAgent keeps in its own storage, written behind its turns (sessions list, search,
 * exports and the cron read it here; turns never do).
 */
export const messages = sqliteTable(
  "messages",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    sessionId: text("session_id").notNull(),
    role: text("role").notNull(),
    content: text("content"),
    /** JSON array of tool calls on assistant messages. */
    toolCalls: text("tool_calls"),
    toolCallId: text("tool_call_id"),
    toolName: text("tool_name"),
    createdAt: integer("created_at").notNull(),
    finishReason: text("finish_reason"),
    tokenCount: integer("token_count"),
    platformMessageId: text("platform_message_id"),
    /** 0 hides a message from replay without deleting it. */
    active: integer("active").notNull().default(1),
    turnId: text("turn_id"),
    /** The message's id in its SessionAgent's own storage (the copy here is written behind it). */
    localId: integer("local_id"),
    inputTokens: integer("input_tokens"),
    outputTokens: integer("output_tokens"),
    /** The model that wrote an assistant message (`offline`: the built-in model). */
    model: text("model"),
    /** Whose turn it was: `<platform>:<user id>`, or `cli` for turns from the API. */
    userKey: text("user_key"),
  },
  (t) => [
    index("messages_session_idx").on(t.sessionId, t.id),
    uniqueIndex("messages_local_idx").on(t.sessionId, t.localId),
    index("messages_created_idx").on(t.createdAt),
  ],
);

/** Session key → session id: which session a chat, thread or user talks to. */
export const sessionRoutes = sqliteTable(
  "session_routes",
  {
    sessionKey: text("session_key").primaryKey(),
    sessionId: text("session_id").notNull(),
    /** JSON of the source the key was built from (platform, chat, thread, user). */
    origin: text("origin"),
    /**
     * 1 when the key was bound on purpose (a handoff, /resume, /new; a Slack thread the bot
     * was asked into): such a thread hears every message, not only mentions.
     */
    bound: integer("bound").notNull().default(0),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [index("session_routes_session_idx").on(t.sessionId)],
);

/** Where a platform's handoffs go, set by /sethome (env values are the default). */
export const homeChannels = sqliteTable("home_channels", {
  platform: text("platform").primaryKey(),
  chatId: text("chat_id").notNull(),
  threadId: text("thread_id"),
  chatName: text("chat_name"),
  setBy: text("set_by"),
  updatedAt: integer("updated_at").notNull(),
});

/**
 * A session's rolling summary: the gist of the turns folded out of its model requests (the
 * transcript itself stays stored). One record per session, written behind its object.
 */
export const summaries = sqliteTable("summaries", {
  sessionId: text("session_id").primaryKey(),
  summary: text("summary").notNull(),
  /** The id (in the session's own storage) of the last message the summary covers. */
  foldedThrough: integer("folded_through").notNull(),
  updatedAt: integer("updated_at").notNull(),
});

/**
 * Tokens per turn, for usage reports and the daily budget: who (a platform user, or the
 * CLI), which session, which UTC day. Kept when old messages are deleted.
 */
export const usage = sqliteTable(
  "usage",
  {
    turnId: text("turn_id").primaryKey(),
    sessionId: text("session_id").notNull(),
    userKey: text("user_key").notNull(),
    /** UTC day, YYYY-MM-DD. */
    day: text("day").notNull(),
    inputTokens: integer("input_tokens").notNull(),
    outputTokens: integer("output_tokens").notNull(),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [index("usage_day_idx").on(t.day), index("usage_user_day_idx").on(t.userKey, t.day), index("usage_session_idx").on(t.sessionId)],
);

export type SessionRow = typeof sessions.$inferSelect;
export type MessageRow = typeof messages.$inferSelect;

/** Small facts about the Worker itself, by key: when the cron last ran (`cron_last_run`). */
export const meta = sqliteTable("meta", {
  key: text("key").primaryKey(),
  value: text("value").notNull(),
  updatedAt: integer("updated_at").notNull(),
});

/**
 * `DAILY_TOKEN_BUDGET`: the tokens each running platform turn holds against its user's day
 * (taken by a conditional insert when the turn starts, so turns of one user in several
 * chats see each other), then its real usage until that reaches `usage`. A turn that died
 * leaves a row that stops counting at `expires_at`.
 */
export const budgetReservations = sqliteTable(
  "budget_reservations",
  {
    turnId: text("turn_id").notNull(),
    sessionId: text("session_id").notNull(),
    userKey: text("user_key").notNull(),
    /** UTC day, YYYY-MM-DD. */
    day: text("day").notNull(),
    tokens: integer("tokens").notNull(),
    expiresAt: integer("expires_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.sessionId, t.turnId] }), index("budget_user_day_idx").on(t.userKey, t.day)],
);

/**
 * Linked identities: the accounts (`<platform>:<user id>`, or `cli:operator` for the
 * operator's CLI) that are one person. An account not listed here is a person of its own.
 * At most one account per platform per person.
 */
export const linkedAccounts = sqliteTable(
  "linked_accounts",
  {
    accountKey: text("account_key").primaryKey(),
    personId: text("person_id").notNull(),
    platform: text("platform").notNull(),
    userId: text("user_id").notNull(),
    linkedAt: integer("linked_at").notNull(),
  },
  (t) => [index("linked_person_idx").on(t.personId), uniqueIndex("linked_person_platform_idx").on(t.personId, t.platform)],
);

/** One-time `/link` codes, by the SHA-256 of the code: single-use, ten minutes. */
export const linkCodes = sqliteTable(
  "link_codes",
  {
    codeHash: text("code_hash").primaryKey(),
    accountKey: text("account_key").notNull(),
    createdAt: integer("created_at").notNull(),
    expiresAt: integer("expires_at").notNull(),
  },
  (t) => [index("link_codes_account_idx").on(t.accountKey)],
);

/** Wrong `/link <code>` guesses per account, counted in a window (the throttle). */
export const linkGuesses = sqliteTable("link_guesses", {
  accountKey: text("account_key").primaryKey(),
  failures: integer("failures").notNull(),
  windowStart: integer("window_start").notNull(),
});
