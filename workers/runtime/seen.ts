import type { Sql } from "./sql.ts";

/**
 * How long a delivery key is remembered: longer than any platform redelivers (Telegram for
 * up to a day, Slack within the hour, Discord never) or a signed webhook is accepted.
 */
export const SEEN_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;

/** Keys forgotten per prune at most, so one call stays cheap; called on each take in, it keeps up. */
const PRUNE_BATCH = 500;

/** The tables that hold delivery keys: an Inbox's and a session's `seen`, a Relay's `relayed` (names kept so stored keys stay readable). */
export type SeenTable = "seen" | "relayed";

/**
 * The one "deliveries already seen" store: delivery keys (`<platform>:<delivery id>`) taken
 * in, with when, in one table `(delivery_key TEXT PRIMARY KEY, at INTEGER NOT NULL)` indexed
 * on `at`, of the storage it is given (each object's own SQLite: the Inbox, the session, the
 * Relay; the gateway's file). Its owner's migrations create the table.
 */
export class SeenDeliveries {
  readonly #sql: Sql;
  readonly #table: SeenTable;

  constructor(sql: Sql, table: SeenTable = "seen") {
    this.#sql = sql;
    this.#table = table;
  }

  /** Records a key: true the first time, false when it was seen before. Forgets keys past the retention. */
  first(deliveryKey: string, now: number): boolean {
    // Forgotten first, so a key past the retention counts as new (not as a duplicate once more).
    this.prune(now);
    const insert = `INSERT INTO ${this.#table} (delivery_key, at) VALUES (?, ?) ON CONFLICT(delivery_key) DO NOTHING RETURNING at`;
    return this.#sql.exec(insert, deliveryKey, now).length > 0;
  }

  /** Whether the key was recorded (and not yet forgotten). */
  has(deliveryKey: string): boolean {
    return this.#sql.exec(`SELECT 1 AS x FROM ${this.#table} WHERE delivery_key = ?`, deliveryKey).length > 0;
  }

  /** Records a key as seen at `now`, whether or not it was before (its retention starts again). */
  remember(deliveryKey: string, now: number): void {
    this.#sql.exec(`INSERT OR REPLACE INTO ${this.#table} (delivery_key, at) VALUES (?, ?)`, deliveryKey, now);
  }

  /** Forgets keys recorded more than {@link SEEN_RETENTION_MS} before `now` (a batch at a time). */
  prune(now: number): void {
    const oldest = `SELECT delivery_key FROM ${this.#table} WHERE at < ? LIMIT ${PRUNE_BATCH}`;
    this.#sql.exec(`DELETE FROM ${this.#table} WHERE delivery_key IN (${oldest})`, now - SEEN_RETENTION_MS);
  }
}
