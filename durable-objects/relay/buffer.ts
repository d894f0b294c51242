import { migrate, num, type Row, SeenDeliveries, type Sql } from "../../workers/runtime/index.ts";

const SCHEMA = [
  `CREATE TABLE buffer (seq INTEGER PRIMARY KEY AUTOINCREMENT, buffer_id TEXT NOT NULL UNIQUE, delivery_key TEXT UNIQUE, frame TEXT NOT NULL, created_at INTEGER NOT NULL);
  CREATE TABLE partials (conn_id TEXT PRIMARY KEY, data TEXT NOT NULL);
  CREATE TABLE counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
  CREATE TABLE used_tokens (sig TEXT PRIMARY KEY, exp INTEGER NOT NULL);
  CREATE TABLE relayed (delivery_key TEXT PRIMARY KEY, at INTEGER NOT NULL);
  CREATE INDEX relayed_at ON relayed (at)`,
  // Attachments: a frame waits (ready 0) until the connector fetched its files; media is
  // then what was fetched. sent_conn: the socket it last went out on.
  `ALTER TABLE buffer ADD COLUMN media TEXT;
  ALTER TABLE buffer ADD COLUMN ready INTEGER NOT NULL DEFAULT 1;
  ALTER TABLE buffer ADD COLUMN sent_conn TEXT;
  CREATE TABLE media_keys (key TEXT PRIMARY KEY, at INTEGER NOT NULL);
  CREATE INDEX media_keys_at ON media_keys (at);
  CREATE TABLE meta (k TEXT PRIMARY KEY, v TEXT NOT NULL)`,
  // The chat (session key) a frame is for: a full buffer drops from the chat with the most waiting.
  `ALTER TABLE buffer ADD COLUMN chat TEXT;
  CREATE INDEX buffer_chat ON buffer (chat, seq)`,
  // Sends made under an idempotency key: what they posted (the result) and a hash of the content.
  `CREATE TABLE sends (key TEXT PRIMARY KEY, content_hash TEXT NOT NULL, result TEXT NOT NULL, at INTEGER NOT NULL);
  CREATE INDEX sends_at ON sends (at)`,
];

/** How long a send's idempotency key is remembered: a gateway restarts within minutes, a reply is not redone days later. */
export const SEND_KEY_RETENTION_MS = 24 * 60 * 60 * 1000;

/** A send made under an idempotency key: a hash of what it posted, and its result. */
export interface KeyedSend {
  contentHash: string;
  result: string;
}

/** Sends made under an idempotency key, remembered (outbound.ts runs them). */
export interface KeyedSends {
  get(key: string): KeyedSend | null;
  put(key: string, send: KeyedSend): void;
  /** Runs `work` after every earlier one under `key` in this object has settled: two sends with one key never run at once. */
  inTurn<T>(key: string, work: () => Promise<T>): Promise<T>;
}

/** What the status route shows for a gateway. */
export interface RelayStatus {
  connected: boolean;
  platforms: string[];
  buffered: number;
  dropped: number;
  /** Bridge actions stored and not yet confirmed by the gateway. */
  actionsWaiting: number;
}

/** A buffered frame: its text, what its attachments are (fetched, or still to fetch), and where it went. */
export interface BufferedFrame {
  bufferId: string;
  frame: string;
  /** JSON: the attachments still to fetch (not ready), or what was fetched (ready). */
  media: string | null;
  ready: boolean;
  sentConn: string | null;
}

function buffered(r: Row): BufferedFrame {
  return {
    bufferId: String(r.buffer_id),
    frame: String(r.frame),
    media: r.media === null ? null : String(r.media),
    ready: num(r.ready) === 1,
    sentConn: r.sent_conn === null ? null : String(r.sent_conn),
  };
}

/**
 * A Relay object's tables: the durable, ordered buffer of inbound frames (kept until
 * acknowledged), partial frames per socket (across hibernation), the tokens already used,
 * the deliveries already relayed, and counters.
 */
export class RelayStore {
  readonly #sql: Sql;
  /** Deliveries already relayed (acknowledged or not), so a redelivery after the ack is not relayed again. */
  readonly #relayed: SeenDeliveries;
  /** Keyed sends under way in this instance, by key: the next one with the same key waits for them. */
  readonly #sending = new Map<string, Promise<void>>();

  constructor(sql: Sql) {
    this.#sql = sql;
    migrate(sql, "relay", SCHEMA);
    this.#relayed = new SeenDeliveries(sql, "relayed");
  }

  /** The keyed sends of this object, as of the clock's now at each call. */
  keyedSends(now: () => number = Date.now): KeyedSends {
    return {
      get: (key) => this.keyedSend(key, now()),
      put: (key, send) => this.rememberSend(key, send, now()),
      inTurn: (key, work) => {
        const run = (this.#sending.get(key) ?? Promise.resolve()).then(work, work);
        const settled = run.then(
          () => undefined,
          () => undefined,
        );
        this.#sending.set(key, settled);
        void settled.then(() => {
          if (this.#sending.get(key) === settled) this.#sending.delete(key);
        });
        return run;
      },
    };
  }

  /** The send made under `key` (within {@link SEND_KEY_RETENTION_MS}), or null. */
  keyedSend(key: string, now: number): KeyedSend | null {
    const row = this.#sql.exec("SELECT content_hash, result FROM sends WHERE key = ? AND at >= ?", key, now - SEND_KEY_RETENTION_MS)[0];
    return row ? { contentHash: String(row.content_hash), result: String(row.result) } : null;
  }

  /** Remembers the send made under `key` (replacing an earlier one), forgetting those past retention. */
  rememberSend(key: string, send: KeyedSend, now: number): void {
    this.#sql.exec("DELETE FROM sends WHERE at < ?", now - SEND_KEY_RETENTION_MS);
    this.#sql.exec(
      "INSERT INTO sends (key, content_hash, result, at) VALUES (?, ?, ?, ?) ON CONFLICT(key) DO UPDATE SET content_hash = excluded.content_hash, result = excluded.result, at = excluded.at",
      key,
      send.contentHash,
      send.result,
      now,
    );
  }

  /** Takes a token once: false when it was used before. Expired ones are forgotten. */
  useToken(sig: string, exp: number, nowS: number): boolean {
    this.#sql.exec("DELETE FROM used_tokens WHERE exp < ?", nowS);
    return this.#sql.exec("INSERT INTO used_tokens (sig, exp) VALUES (?, ?) ON CONFLICT(sig) DO NOTHING RETURNING sig", sig, exp).length > 0;
  }

  /** Records a delivery as relayed; false when it was relayed before (acknowledged or not). */
  firstRelay(deliveryKey: string, now: number): boolean {
    return this.#relayed.first(deliveryKey, now);
  }

  /**
   * Stores a frame for `chat` (`pending`: attachments to fetch before it may go), then,
   * beyond `limit`, drops the oldest frame of the chat with the most frames waiting (so one
   * user flooding evicts their own messages, not another chat's), returning how many.
   */
  buffer(bufferId: string, deliveryKey: string, frame: string, now: number, limit: number, pending: string | null = null, chat: string | null = null): number {
    this.#sql.exec(
      "INSERT INTO buffer (buffer_id, delivery_key, frame, created_at, media, ready, chat) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(delivery_key) DO NOTHING",
      bufferId,
      deliveryKey,
      frame,
      now,
      pending,
      pending === null ? 1 : 0,
      chat,
    );
    const excess = this.buffered() - limit;
    if (excess <= 0) return 0;
    for (let i = 0; i < excess; i++) {
      this.#sql.exec(
        "DELETE FROM buffer WHERE seq = (SELECT MIN(seq) FROM buffer WHERE chat IS (SELECT chat FROM buffer GROUP BY chat ORDER BY COUNT(*) DESC, MIN(seq) LIMIT 1))",
      );
    }
    this.#sql.exec("INSERT INTO counters (name, value) VALUES ('dropped', ?) ON CONFLICT(name) DO UPDATE SET value = value + excluded.value", excess);
    return excess;
  }

  ack(bufferId: string): void {
    this.#sql.exec("DELETE FROM buffer WHERE buffer_id = ?", bufferId);
  }

  /** Unacknowledged frames not yet sent on socket `connId`, oldest first. */
  unsent(connId: string, limit = 200): BufferedFrame[] {
    return this.#sql
      .exec("SELECT buffer_id, frame, media, ready, sent_conn FROM buffer WHERE sent_conn IS NULL OR sent_conn <> ? ORDER BY seq LIMIT ?", connId, limit)
      .map(buffered);
  }

  /** Frames whose attachments are still to be fetched, oldest first. */
  pendingMedia(): BufferedFrame[] {
    return this.#sql.exec("SELECT buffer_id, frame, media, ready, sent_conn FROM buffer WHERE ready = 0 ORDER BY seq").map(buffered);
  }

  /** A frame's attachments were fetched: it may go now. */
  setMedia(bufferId: string, media: string, keys: readonly string[], now: number): void {
    this.#sql.exec("UPDATE buffer SET media = ?, ready = 1 WHERE buffer_id = ?", media, bufferId);
    for (const k of keys) this.#sql.exec("INSERT OR REPLACE INTO media_keys (key, at) VALUES (?, ?)", k, now);
  }

  /** Remembers a kept file's key, deleted with relayed media after their retention. */
  keepKey(key: string, now: number): void {
    this.#sql.exec("INSERT OR REPLACE INTO media_keys (key, at) VALUES (?, ?)", key, now);
  }

  meta(k: string): string | null {
    const row = this.#sql.exec("SELECT v FROM meta WHERE k = ?", k)[0];
    return row ? String(row.v) : null;
  }

  setMeta(k: string, v: string): void {
    this.#sql.exec("INSERT INTO meta (k, v) VALUES (?, ?) ON CONFLICT(k) DO UPDATE SET v = excluded.v", k, v);
  }

  markSent(bufferId: string, connId: string): void {
    this.#sql.exec("UPDATE buffer SET sent_conn = ? WHERE buffer_id = ?", connId, bufferId);
  }

  /** Kept attachments older than `before` (a gateway had its hour to fetch them), forgotten as they are returned. */
  expiredMedia(before: number, limit = 100): string[] {
    const keys = this.#sql.exec("SELECT key FROM media_keys WHERE at < ? ORDER BY at LIMIT ?", before, limit).map((r) => String(r.key));
    for (const k of keys) this.#sql.exec("DELETE FROM media_keys WHERE key = ?", k);
    return keys;
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
