import type { PlatformEvent, SessionSource } from "../../workers/platforms/types.ts";
import { migrate, num, SeenDeliveries, str, type Sql } from "../../workers/runtime/index.ts";

/** Which session a key talks to, and whether its thread hears every message. */
export interface Binding {
  sessionId: string;
  /** Bound on purpose (a handoff, /resume, /new; a Slack thread the bot was asked into). */
  bound: boolean;
  origin: Omit<SessionSource, "userId"> & { userId?: string | null };
  updatedAt: number;
  /** D1 has this version. */
  synced: boolean;
}

/** A delivery taken in and not yet handed on. */
export interface OutboxItem {
  seq: number;
  deliveryKey: string;
  event: PlatformEvent;
  attempts: number;
  createdAt: number;
}

const SCHEMA = [
  `CREATE TABLE binding (id INTEGER PRIMARY KEY CHECK (id = 1), session_id TEXT NOT NULL, bound INTEGER NOT NULL, origin TEXT NOT NULL, updated_at INTEGER NOT NULL, synced INTEGER NOT NULL DEFAULT 0);
  CREATE TABLE seen (delivery_key TEXT PRIMARY KEY, at INTEGER NOT NULL);
  CREATE INDEX seen_by_time ON seen (at);
  CREATE TABLE outbox (seq INTEGER PRIMARY KEY AUTOINCREMENT, delivery_key TEXT NOT NULL, event TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, created_at INTEGER NOT NULL);
  CREATE TABLE meta (k TEXT PRIMARY KEY, v TEXT NOT NULL)`,
];

/**
 * An Inbox's tables: the key's binding, delivery ids seen, the ordered outbox, small facts.
 * The binding and the facts are also kept in memory (this object is their only writer):
 * a delivery reads them several times on its way through.
 */
export class InboxStore {
  readonly #sql: Sql;
  /** undefined: not read yet. */
  #binding: Binding | null | undefined;
  readonly #meta = new Map<string, string | null>();
  readonly #seen: SeenDeliveries;
  /** The outbox as stored, oldest first (undefined: not read yet); written through, so a delivery is never read back. */
  #outbox: OutboxItem[] | undefined;

  constructor(sql: Sql) {
    this.#sql = sql;
    migrate(sql, "inbox", SCHEMA);
    this.#seen = new SeenDeliveries(sql, "seen");
  }

  binding(): Binding | null {
    if (this.#binding === undefined) {
      const r = this.#sql.exec("SELECT * FROM binding WHERE id = 1")[0];
      this.#binding = r
        ? {
            sessionId: String(r.session_id),
            bound: num(r.bound) === 1,
            origin: JSON.parse(String(r.origin)) as Binding["origin"],
            updatedAt: num(r.updated_at),
            synced: num(r.synced) === 1,
          }
        : null;
    }
    return this.#binding;
  }

  setBinding(b: Omit<Binding, "synced">): void {
    this.#sql.exec(
      "INSERT INTO binding (id, session_id, bound, origin, updated_at, synced) VALUES (1, ?, ?, ?, ?, 0) ON CONFLICT(id) DO UPDATE SET session_id = excluded.session_id, bound = excluded.bound, origin = excluded.origin, updated_at = excluded.updated_at, synced = 0",
      b.sessionId,
      b.bound ? 1 : 0,
      JSON.stringify(b.origin),
      b.updatedAt,
    );
    this.#binding = { ...b, synced: false };
  }

  clearBinding(): void {
    this.#sql.exec("DELETE FROM binding");
    this.#binding = null;
  }

  markSynced(updatedAt: number): void {
    this.#sql.exec("UPDATE binding SET synced = 1 WHERE updated_at = ?", updatedAt);
    const b = this.binding();
    if (b && b.updatedAt === updatedAt) this.#binding = { ...b, synced: true };
  }

  /** Records a delivery id: false when it was seen before (keys past the retention are forgotten on the way). */
  firstTime(deliveryKey: string, now: number): boolean {
    return this.#seen.first(deliveryKey, now);
  }

  /** Whether a delivery id was recorded (and not yet forgotten), recording nothing. */
  seen(deliveryKey: string): boolean {
    return this.#seen.has(deliveryKey);
  }

  push(deliveryKey: string, event: PlatformEvent, now: number): void {
    const items = this.#items(); // read before the insert, which it would hold already
    const json = JSON.stringify(event);
    const seq = num(this.#sql.exec("INSERT INTO outbox (delivery_key, event, created_at) VALUES (?, ?, ?) RETURNING seq", deliveryKey, json, now)[0]?.seq);
    // What a read would give: the event as JSON made it.
    items.push({ seq, deliveryKey, event: JSON.parse(json) as PlatformEvent, attempts: 0, createdAt: now });
  }

  #items(): OutboxItem[] {
    this.#outbox ??= this.#sql.exec("SELECT * FROM outbox ORDER BY seq").map((r) => ({
      seq: num(r.seq),
      deliveryKey: String(r.delivery_key),
      event: JSON.parse(String(r.event)) as PlatformEvent,
      attempts: num(r.attempts),
      createdAt: num(r.created_at),
    }));
    return this.#outbox;
  }

  first(): OutboxItem | null {
    return this.#items()[0] ?? null;
  }

  /** The oldest `n` items, in order. */
  head(n: number): OutboxItem[] {
    return this.#items().slice(0, n);
  }

  done(seq: number): void {
    this.#sql.exec("DELETE FROM outbox WHERE seq = ?", seq);
    const items = this.#items();
    const at = items.findIndex((i) => i.seq === seq);
    if (at >= 0) items.splice(at, 1);
  }

  failed(seq: number): number {
    const attempts = num(this.#sql.exec("UPDATE outbox SET attempts = attempts + 1 WHERE seq = ? RETURNING attempts", seq)[0]?.attempts);
    const item = this.#items().find((i) => i.seq === seq);
    if (item) item.attempts = attempts;
    return attempts;
  }

  pending(): number {
    return this.#items().length;
  }

  meta(k: string): string | null {
    if (!this.#meta.has(k)) this.#meta.set(k, str(this.#sql.exec("SELECT v FROM meta WHERE k = ?", k)[0]?.v));
    return this.#meta.get(k) ?? null;
  }

  setMeta(k: string, v: string): void {
    this.#sql.exec("INSERT INTO meta (k, v) VALUES (?, ?) ON CONFLICT(k) DO UPDATE SET v = excluded.v", k, v);
    this.#meta.set(k, v);
  }
}
