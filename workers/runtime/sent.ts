import { migrate, type ComponentSchema, type Sql, SessionRows } from "./sql.ts";

/** How long a sent message's id is remembered: Meta reports a failure within days (it retries for up to 30). */
export const SENT_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;

const SCHEMA = [
  `CREATE TABLE sent_messages (
    message_id TEXT PRIMARY KEY,
    session TEXT NOT NULL,
    turn_id TEXT NOT NULL,
    at INTEGER NOT NULL
  );
  CREATE INDEX sent_messages_at ON sent_messages (at);
  CREATE TABLE undelivered (
    turn_id TEXT PRIMARY KEY,
    session TEXT NOT NULL,
    reason TEXT NOT NULL,
    at INTEGER NOT NULL
  )`,
];

/**
 * Which platform message showed which turn's reply, and the replies a platform reported
 * undelivered after it had accepted them (a later `failed` status). A message id may carry
 * a `~`-suffix its adapter keeps beside it: a report names the id without it.
 */
export class SentStore extends SessionRows {
  static readonly schema: ComponentSchema = ["sent", SCHEMA];

  static migrate(sql: Sql): void {
    migrate(sql, ...this.schema);
  }

  /** Remembers that `ids` show (part of) `turnId`'s reply; forgets ids past {@link SENT_RETENTION_MS}. */
  record(turnId: string, ids: readonly string[], at: number): void {
    this.sql.exec("DELETE FROM sent_messages WHERE at < ?", at - SENT_RETENTION_MS);
    for (const id of ids) {
      this.sql.exec("INSERT OR IGNORE INTO sent_messages (message_id, session, turn_id, at) VALUES (?, ?, ?, ?)", id, this.session, turnId, at);
    }
  }

  /** The turn whose reply `messageRef` showed, or null for a message this session did not send. */
  turnOf(messageRef: string): string | null {
    const q = "SELECT turn_id FROM sent_messages WHERE session = ? AND (message_id = ? OR substr(message_id, 1, ?) = ?) LIMIT 1";
    const row = this.sql.exec(q, this.session, messageRef, messageRef.length + 1, `${messageRef}~`)[0];
    return row ? String(row.turn_id) : null;
  }

  /** Records `turnId`'s reply as undelivered (the first reason is kept). */
  fail(turnId: string, reason: string, at: number): void {
    this.sql.exec("INSERT OR IGNORE INTO undelivered (turn_id, session, reason, at) VALUES (?, ?, ?, ?)", turnId, this.session, reason, at);
  }

  /** Undelivered replies: turn id → why. */
  failures(): Map<string, string> {
    return new Map(this.sql.exec("SELECT turn_id, reason FROM undelivered WHERE session = ?", this.session).map((r) => [String(r.turn_id), String(r.reason)]));
  }
}
