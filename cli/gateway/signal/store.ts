import type { BridgeResult } from "../../../workers/relay/bridge.ts";
import { migrate, num, type Sql } from "../../../workers/runtime/index.ts";

const SCHEMA = [
  // What signal-cli delivered, kept until the Worker acknowledged it (bridge_inbound_ack).
  `CREATE TABLE bridge_inbound (seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, platform TEXT NOT NULL, body TEXT NOT NULL,
     created_at INTEGER NOT NULL, sent_at INTEGER);
  CREATE TABLE bridge_done (action_id TEXT PRIMARY KEY, result TEXT NOT NULL, at INTEGER NOT NULL);
  CREATE INDEX bridge_done_at ON bridge_done (at)`,
];

/** How long the result of an action run is remembered (a repeat after a reconnect is answered from it). */
const DONE_RETENTION_MS = 24 * 60 * 60 * 1000;

/** A received item waiting for the Worker's ack. */
export interface WaitingItem {
  id: string;
  platform: string;
  body: string;
  sentAt: number | null;
}

/** The bridge's part of the gateway's SQLite file: received items until acked, actions already run. */
export class BridgeLocal {
  readonly #sql: Sql;

  constructor(sql: Sql) {
    this.#sql = sql;
    migrate(sql, "gateway-bridge", SCHEMA);
  }

  add(id: string, platform: string, body: string, now: number): void {
    this.#sql.exec("INSERT OR IGNORE INTO bridge_inbound (id, platform, body, created_at) VALUES (?, ?, ?, ?)", id, platform, body, now);
  }

  /** Items not acked, oldest first. */
  waiting(limit = 500): WaitingItem[] {
    return this.#sql.exec("SELECT id, platform, body, sent_at FROM bridge_inbound ORDER BY seq LIMIT ?", limit).map((r) => ({
      id: String(r.id),
      platform: String(r.platform),
      body: String(r.body),
      sentAt: r.sent_at === null ? null : num(r.sent_at),
    }));
  }

  markSent(id: string, now: number): void {
    this.#sql.exec("UPDATE bridge_inbound SET sent_at = ? WHERE id = ?", now, id);
  }

  ack(id: string): void {
    this.#sql.exec("DELETE FROM bridge_inbound WHERE id = ?", id);
  }

  count(): number {
    return num(this.#sql.exec("SELECT COUNT(*) AS n FROM bridge_inbound")[0]?.n);
  }

  /** The result of an action already run, or null. */
  done(actionId: string): BridgeResult | null {
    const r = this.#sql.exec("SELECT result FROM bridge_done WHERE action_id = ?", actionId)[0];
    return r ? (JSON.parse(String(r.result)) as BridgeResult) : null;
  }

  remember(actionId: string, result: BridgeResult, now: number): void {
    this.#sql.exec("INSERT OR REPLACE INTO bridge_done (action_id, result, at) VALUES (?, ?, ?)", actionId, JSON.stringify(result), now);
    this.#sql.exec("DELETE FROM bridge_done WHERE at < ?", now - DONE_RETENTION_MS);
  }
}
