/** What a session is created with (by the Inbox for a platform chat, or the API for the CLI). */
export interface SessionSeed {
  source: string;
  title?: string | null;
  userId?: string | null;
  chatId?: string | null;
  chatType?: string | null;
  threadId?: string | null;
  sessionKey?: string | null;
  model: string;
}
