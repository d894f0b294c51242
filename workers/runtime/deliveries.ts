import type { ReplyTarget } from "../platforms/types.ts";
import { migrate, type ComponentSchema, num, type Sql, SessionRows } from "./sql.ts";

/** A final reply not yet confirmed by its platform. */
export interface PendingDelivery {
  turnId: string;
  session: string;
  target: ReplyTarget;
  /** The full reply (Markdown). */
  text: string;
  /** Messages already showing (part of) it: the delivery edits them. */
  ids: string[];
  attempts: number;
  /** Not before this time (a platform's retry_after, or backoff). */
  notBefore: number;
  createdAt: number;
}

const SCHEMA = [
  `CREATE TABLE deliveries (
    turn_id TEXT PRIMARY KEY,
    session TEXT NOT NULL,
    target TEXT NOT NULL,
    text TEXT NOT NULL,
    ids TEXT NOT NULL DEFAULT '[]',
    attempts INTEGER NOT NULL DEFAULT 0,
    not_before INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL
  )`,
];

/**
 * Final replies kept until their platform confirmed them: written in the same transaction
 * that ends the turn, so neither a failed edit nor a crash while waiting on a 429 leaves the
 * user with a truncated reply. Resumed after a restart.
 */
export class DeliveryStore extends SessionRows {
  static readonly schema: ComponentSchema = ["deliveries", SCHEMA];

  static migrate(sql: Sql): void {
    migrate(sql, ...this.schema);
  }

  /** Sessions with deliveries pending in this storage. */
  static sessionsWithWork(sql: Sql): string[] {
    return sql.exec("SELECT DISTINCT session FROM deliveries").map((r) => String(r.session));
  }

  put(d: Omit<PendingDelivery, "session">): void {
    this.sql.exec(
      "INSERT OR REPLACE INTO deliveries (turn_id, session, target, text, ids, attempts, not_before, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
      d.turnId,
      this.session,
      JSON.stringify(d.target),
      d.text,
      JSON.stringify(d.ids),
      d.attempts,
      d.notBefore,
      d.createdAt,
    );
  }

  /** Records a failed attempt: what now shows, and when to try again. */
  retryLater(turnId: string, ids: readonly string[], attempts: number, notBefore: number): void {
    this.sql.exec("UPDATE deliveries SET ids = ?, attempts = ?, not_before = ? WHERE turn_id = ?", JSON.stringify(ids), attempts, notBefore, turnId);
  }

  done(turnId: string): void {
    this.sql.exec("DELETE FROM deliveries WHERE turn_id = ?", turnId);
  }

  all(): PendingDelivery[] {
    return this.sql.exec("SELECT * FROM deliveries WHERE session = ? ORDER BY created_at", this.session).map((r) => ({
      turnId: String(r.turn_id),
      session: String(r.session),
      target: JSON.parse(String(r.target)) as ReplyTarget,
      text: String(r.text),
      ids: JSON.parse(String(r.ids)) as string[],
      attempts: num(r.attempts),
      notBefore: num(r.not_before),
      createdAt: num(r.created_at),
    }));
  }
}
