import { mkdirSync } from "node:fs";
import path from "node:path";
import { DatabaseSync } from "node:sqlite";
import type { ReadMarks } from "../../workers/attachments/index.ts";
import { DeliveryStore, migrate, num, SessionRuntime, TurnQueue, type Sql } from "../../workers/runtime/index.ts";
import { nodeSql } from "./sqlite.ts";

const SCHEMA = [
  `CREATE TABLE generations (session_key TEXT PRIMARY KEY, generation INTEGER NOT NULL DEFAULT 0)`,
  // Each session's rolling summary, as the edge's session objects keep theirs.
  `CREATE TABLE summaries (session TEXT PRIMARY KEY, summary TEXT, folded_through INTEGER NOT NULL DEFAULT 0)`,
  // The UTC day each chat was last told its user is over DAILY_TOKEN_BUDGET (once a day).
  `CREATE TABLE budget_told (chat TEXT PRIMARY KEY, day TEXT NOT NULL)`,
  // The attachment each turn was reading (a PDF): a mark left by a crash makes the re-run describe it instead.
  `CREATE TABLE reading_marks (turn_id TEXT NOT NULL, idx INTEGER NOT NULL, PRIMARY KEY (turn_id, idx))`,
];

/**
 * The gateway's local state in one SQLite file (`node:sqlite`): the same turn queue,
 * transcript, delivery and usage tables the edge's session objects keep (the runtime's own),
 * each session's rolling summary, and which generation of each session key is current
 * (`/new` starts the next one).
 */
export class GatewayStore {
  readonly #db: DatabaseSync;
  readonly sql: Sql;

  /** Opens (creating the file and its directory) the store at `file`; ":memory:" works too. */
  static open(file: string): GatewayStore {
    if (file !== ":memory:") mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
    return new GatewayStore(new DatabaseSync(file));
  }

  constructor(db: DatabaseSync) {
    this.#db = db;
    db.exec("PRAGMA journal_mode = WAL; PRAGMA busy_timeout = 2000;");
    this.sql = nodeSql(db);
    SessionRuntime.migrate(this.sql);
    migrate(this.sql, "gateway", SCHEMA);
  }

  /** The runtime session of a key: the key and its current generation. */
  sessionRef(sessionKey: string): string {
    const row = this.sql.exec("SELECT generation FROM generations WHERE session_key = ?", sessionKey)[0];
    return `${sessionKey}#${num(row?.generation)}`;
  }

  /** Starts a fresh transcript for `sessionKey` (`/new`); earlier ones stay in the file. */
  reset(sessionKey: string): string {
    this.sql.exec(
      "INSERT INTO generations (session_key, generation) VALUES (?, 1) ON CONFLICT (session_key) DO UPDATE SET generation = generation + 1",
      sessionKey,
    );
    return this.sessionRef(sessionKey);
  }

  /** A session's rolling summary and the last stored message it covers. */
  summary(sessionRef: string): { summary: string | null; foldedThrough: number } {
    const row = this.sql.exec("SELECT summary, folded_through FROM summaries WHERE session = ?", sessionRef)[0];
    return { summary: row?.summary === undefined || row.summary === null ? null : String(row.summary), foldedThrough: num(row?.folded_through) };
  }

  saveSummary(sessionRef: string, summary: string | null, foldedThrough: number): void {
    this.sql.exec(
      "INSERT INTO summaries (session, summary, folded_through) VALUES (?, ?, ?) ON CONFLICT (session) DO UPDATE SET summary = excluded.summary, folded_through = excluded.folded_through",
      sessionRef,
      summary,
      foldedThrough,
    );
  }

  /** Notes that `chat` was told about the budget on `day`; false if it already was. */
  tellBudgetOnce(chat: string, day: string): boolean {
    const row = this.sql.exec("SELECT day FROM budget_told WHERE chat = ?", chat)[0];
    if (row?.day === day) return false;
    this.sql.exec("INSERT INTO budget_told (chat, day) VALUES (?, ?) ON CONFLICT (chat) DO UPDATE SET day = excluded.day", chat, day);
    return true;
  }

  /** Marks of the attachments a turn is reading, kept in this file so that a crash cannot lose them. */
  readingMarks(turnId: string): ReadMarks {
    return {
      has: async (index) => this.sql.exec("SELECT 1 AS x FROM reading_marks WHERE turn_id = ? AND idx = ?", turnId, index).length > 0,
      set: async (index) => void this.sql.exec("INSERT OR IGNORE INTO reading_marks (turn_id, idx) VALUES (?, ?)", turnId, index),
      clear: async (index) => void this.sql.exec("DELETE FROM reading_marks WHERE turn_id = ? AND idx = ?", turnId, index),
    };
  }

  /** Sessions with turns or deliveries left by an earlier run. */
  sessionsWithWork(): string[] {
    return [...new Set([...TurnQueue.sessionsWithWork(this.sql), ...DeliveryStore.sessionsWithWork(this.sql)])];
  }

  close(): void {
    if (this.#db.isOpen) this.#db.close();
  }
}
