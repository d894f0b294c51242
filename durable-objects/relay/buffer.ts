import { migrate, num, type Sql } from "../../workers/runtime/index.ts";

const SCHEMA = [
  `CREATE TABLE buffer (seq INTEGER PRIMARY KEY AUTOINCREMENT, buffer_id TEXT NOT NULL UNIQUE, delivery_key TEXT UNIQUE, frame TEXT NOT NULL, created_at INTEGER NOT NULL);
  CREATE TABLE partials (conn_id TEXT PRIMARY KEY, data TEXT NOT NULL);
  CREATE TABLE counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
  CREATE TABLE used_tokens (sig TEXT PRIMARY KEY, exp INTEGER NOT NULL);
  CREATE TABLE relayed (delivery_key TEXT PRIMARY KEY, at INTEGER NOT NULL);
  CREATE INDEX relayed_at ON relayed (at)`,
];

/** Relayed deliveries are remembered this long, so a redelivery after the ack is not relayed again. */
export const RELAYED_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;

/**
 * A Relay object's tables: the durable, ordered buffer of inbound frames (kept until
 * acknowledged), partial frames per socket (across hibernation), the tokens already used,
 * the deliveries already relayed, and counters.
 */
export class RelayStore {
  readonly #sql: Sql;

  constructor(sql: Sql) {
    this.#sql = sql;
    migrate(sql, "relay", SCHEMA);
  }

  /** Takes a token once: false when it was used before. Expired ones are forgotten. */
  useToken(sig: string, exp: number, nowS: number): boolean {
    this.#sql.exec("DELETE FROM used_tokens WHERE exp < ?", nowS);
    return this.#sql.exec("INSERT INTO used_tokens (sig, exp) VALUES (?, ?) ON CONFLICT(sig) DO NOTHING RETURNING sig", sig, exp).length > 0;
  }

  /** Records a delivery as relayed; false when it was relayed before (acknowledged or not). */
  firstRelay(deliveryKey: string, now: number): boolean {
    const first = this.#sql.exec("INSERT INTO relayed (delivery_key, at) VALUES (?, ?) ON CONFLICT(delivery_key) DO NOTHING RETURNING at", deliveryKey, now).length > 0;
    this.#sql.exec("DELETE FROM relayed WHERE delivery_key IN (SELECT delivery_key FROM relayed WHERE at < ? LIMIT 100)", now - RELAYED_RETENTION_MS);
    return first;
  }

  /** Stores a frame, then drops the oldest beyond `limit` (returning how many). */
  buffer(bufferId: string, deliveryKey: string, frame: string, now: number, limit: number): number {
    this.#sql.exec("INSERT INTO buffer (buffer_id, delivery_key, frame, created_at) VALUES (?, ?, ?, ?) ON CONFLICT(delivery_key) DO NOTHING", bufferId, deliveryKey, frame, now);
    const excess = this.buffered() - limit;
    if (excess <= 0) return 0;
    this.#sql.exec("DELETE FROM buffer WHERE seq IN (SELECT seq FROM buffer ORDER BY seq LIMIT ?)", excess);
    this.#sql.exec("INSERT INTO counters (name, value) VALUES ('dropped', ?) ON CONFLICT(name) DO UPDATE SET value = value + excluded.value", excess);
    return excess;
  }

  ack(bufferId: string): void {
    this.#sql.exec("DELETE FROM buffer WHERE buffer_id = ?", bufferId);
  }

  /** Every unacknowledged frame, oldest first. */
  frames(): string[] {
    return this.#sql.exec("SELECT frame FROM buffer ORDER BY seq").map((r) => String(r.frame));
  }

  buffered(): number {
    return num(this.#sql.exec("SELECT COUNT(*) AS n FROM buffer")[0]?.n);
  }

  dropped(): number {
    return num(this.#sql.exec("SELECT value FROM counters WHERE name = 'dropped'")[0]?.value);
  }

  partial(connId: string): string {
    const row = this.#sql.exec("SELECT data FROM partials WHERE conn_id = ?", connId)[0];
    return row ? String(row.data) : "";
  }

  setPartial(connId: string, data: string): void {
    if (data) this.#sql.exec("INSERT OR REPLACE INTO partials (conn_id, data) VALUES (?, ?)", connId, data);
    else this.#sql.exec("DELETE FROM partials WHERE conn_id = ?", connId);
  }
}
