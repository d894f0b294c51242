import { mkdirSync } from "node:fs";
import path from "node:path";
import { DatabaseSync } from "node:sqlite";
import type { ChatMessage } from "../../workers/agent/index.ts";

/** Handled-message keys kept for replay dedupe; the connector buffers at most 10,000 frames. */
export const HANDLED_KEYS_KEPT = 20_000;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS sessions (
  session_key TEXT PRIMARY KEY,
  generation INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS messages (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  session_key TEXT NOT NULL,
  generation INTEGER NOT NULL,
  message TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS messages_by_session ON messages (session_key, generation, id);
CREATE TABLE IF NOT EXISTS handled (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  key TEXT NOT NULL UNIQUE
);
`;

/**
 * The gateway's local state in one SQLite file (`node:sqlite`): a transcript per session
 * key, and the keys (`platform:chat_id:message_id`) of handled messages, so a replay after
 * a reconnect or a restart is not run twice.
 */
export class GatewayStore {
  readonly #db: DatabaseSync;

  /** Opens (creating the file and its directory) the store at `file`; ":memory:" works too. */
  static open(file: string): GatewayStore {
    if (file !== ":memory:") mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
    return new GatewayStore(new DatabaseSync(file));
  }

  constructor(db: DatabaseSync) {
    this.#db = db;
    db.exec("PRAGMA journal_mode = WAL; PRAGMA busy_timeout = 2000;");
    db.exec(SCHEMA);
  }

  #generation(sessionKey: string): number {
    const row = this.#db.prepare("SELECT generation FROM sessions WHERE session_key = ?").get(sessionKey);
    return typeof row?.generation === "number" ? row.generation : 0;
  }

  /** The current transcript of `sessionKey`, oldest first. */
  transcript(sessionKey: string): ChatMessage[] {
    const rows = this.#db.prepare("SELECT message FROM messages WHERE session_key = ? AND generation = ? ORDER BY id").all(sessionKey, this.#generation(sessionKey));
    return rows.map((r) => JSON.parse(String(r.message)) as ChatMessage);
  }

  /** Appends one message to the current transcript of `sessionKey`. */
  append(sessionKey: string, message: ChatMessage): void {
    this.#db.prepare("INSERT INTO messages (session_key, generation, message) VALUES (?, ?, ?)").run(sessionKey, this.#generation(sessionKey), JSON.stringify(message));
  }

  /** Starts a fresh transcript for `sessionKey` (`/new`); earlier ones stay in the file. */
  reset(sessionKey: string): void {
    this.#db
      .prepare("INSERT INTO sessions (session_key, generation) VALUES (?, 1) ON CONFLICT (session_key) DO UPDATE SET generation = generation + 1")
      .run(sessionKey);
  }

  isHandled(key: string): boolean {
    return this.#db.prepare("SELECT 1 AS x FROM handled WHERE key = ?").get(key) !== undefined;
  }

  /** Records a handled message, forgetting the oldest keys beyond {@link HANDLED_KEYS_KEPT}. */
  markHandled(key: string): void {
    this.#db.prepare("INSERT OR IGNORE INTO handled (key) VALUES (?)").run(key);
    this.#db.prepare("DELETE FROM handled WHERE id <= (SELECT MAX(id) FROM handled) - ?").run(HANDLED_KEYS_KEPT);
  }

  close(): void {
    if (this.#db.isOpen) this.#db.close();
  }
}
