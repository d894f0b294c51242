import type { SessionRow } from "../../workers/db/schema.ts";
import type { SessionSeed } from "../../workers/db/seed.ts";
import { newSessionId, titleFrom } from "../../workers/db/ids.ts";
import { migrate, type ComponentSchema, num, type Sql } from "../../workers/runtime/index.ts";
import type { HandoffOrigin } from "./handoff-state.ts";

/** The session row this object owns, with the facts it keeps for itself beside it. */
export interface SessionRecord extends SessionRow {
  /** The session key a handoff bound to this session (unbound again if the handoff dies). */
  handoffDestKey?: string | null;
  /** The turn of a handoff's notice (hidden again if the handoff dies). */
  handoffTurnId?: string | null;
  /** A handoff to a person's DM: their user id on the destination platform. */
  handoffDmUser?: string | null;
  /** The chat a `/handoff` was sent in. */
  handoffOrigin?: HandoffOrigin | null;
  /** 1 once that chat was unbound from the session (bound again if the handoff dies). */
  handoffReleased?: number | null;
  /** The rolling summary of the turns folded out of model requests. */
  summary?: string | null;
  /** The stored id of the last message the summary covers (0: none folded). */
  foldedThrough?: number;
}

/** A message row's tool calls, in SQL (`row`: NEW or OLD in a trigger). */
function CALLS(row: "NEW" | "OLD"): string {
  return `(CASE WHEN ${row}.tool_calls IS NOT NULL THEN json_array_length(${row}.tool_calls) ELSE 0 END)`;
}

const SCHEMA = [
  `CREATE TABLE session (id TEXT PRIMARY KEY, row TEXT NOT NULL, dirty INTEGER NOT NULL DEFAULT 1)`,
  // The session's counters, kept by triggers on every write of the transcript and the usage
  // (appended, imported, a turn's messages set inactive, usage recorded again): the D1 copy
  // reads one row instead of aggregating the whole transcript on every copy (0.9 ms of SQLite
  // at 4,000 messages, 3.2 ms at 20,000, and growing). Filled from the rows already stored.
  // A trigger is one line: migration steps split statements at a ";" that ends a line.
  `CREATE TABLE counters (session TEXT PRIMARY KEY, n INTEGER NOT NULL DEFAULT 0, at INTEGER NOT NULL DEFAULT 0, calls INTEGER NOT NULL DEFAULT 0, input INTEGER NOT NULL DEFAULT 0, output INTEGER NOT NULL DEFAULT 0);
  INSERT INTO counters (session, n, at, calls) SELECT session, COUNT(*), COALESCE(MAX(created_at), 0), COALESCE(SUM(CASE WHEN tool_calls IS NOT NULL THEN json_array_length(tool_calls) ELSE 0 END), 0) FROM messages WHERE active = 1 GROUP BY session ON CONFLICT(session) DO NOTHING;
  INSERT INTO counters (session) SELECT DISTINCT session FROM usage_turns WHERE true ON CONFLICT(session) DO NOTHING;
  UPDATE counters SET input = (SELECT COALESCE(SUM(input), 0) FROM usage_turns u WHERE u.session = counters.session), output = (SELECT COALESCE(SUM(output), 0) FROM usage_turns u WHERE u.session = counters.session);
  CREATE TRIGGER counters_message_in AFTER INSERT ON messages WHEN NEW.active = 1 BEGIN INSERT INTO counters (session, n, at, calls) VALUES (NEW.session, 1, NEW.created_at, ${CALLS("NEW")}) ON CONFLICT(session) DO UPDATE SET n = n + 1, at = MAX(at, excluded.at), calls = calls + excluded.calls; END;
  CREATE TRIGGER counters_message_active AFTER UPDATE OF active ON messages WHEN OLD.active <> NEW.active BEGIN INSERT INTO counters (session) VALUES (NEW.session) ON CONFLICT(session) DO NOTHING; UPDATE counters SET n = n + (CASE WHEN NEW.active = 1 THEN 1 ELSE -1 END), calls = calls + (CASE WHEN NEW.active = 1 THEN 1 ELSE -1 END) * ${CALLS("NEW")}, at = CASE WHEN NEW.active = 1 THEN MAX(at, NEW.created_at) ELSE at END WHERE session = NEW.session; END;
  CREATE TRIGGER counters_message_out AFTER DELETE ON messages WHEN OLD.active = 1 BEGIN UPDATE counters SET n = n - 1, calls = calls - ${CALLS("OLD")} WHERE session = OLD.session; END;
  CREATE TRIGGER counters_usage_in AFTER INSERT ON usage_turns BEGIN INSERT INTO counters (session, input, output) VALUES (NEW.session, NEW.input, NEW.output) ON CONFLICT(session) DO UPDATE SET input = input + excluded.input, output = output + excluded.output; END;
  CREATE TRIGGER counters_usage_change AFTER UPDATE OF input, output ON usage_turns BEGIN UPDATE counters SET input = input - OLD.input + NEW.input, output = output - OLD.output + NEW.output WHERE session = NEW.session; END;
  CREATE TRIGGER counters_usage_out AFTER DELETE ON usage_turns BEGIN UPDATE counters SET input = input - OLD.input, output = output - OLD.output WHERE session = OLD.session; END`,
];

/** A fresh row from a seed. */
export function newRecord(seed: SessionSeed, now: number, id = newSessionId(now)): SessionRecord {
  return {
    id,
    source: seed.source,
    userId: seed.userId ?? null,
    chatId: seed.chatId ?? null,
    chatType: seed.chatType ?? null,
    threadId: seed.threadId ?? null,
    sessionKey: seed.sessionKey ?? null,
    title: seed.title ?? null,
    model: seed.model,
    parentSessionId: null,
    startedAt: now,
    endedAt: null,
    lastActiveAt: now,
    endReason: null,
    messageCount: 0,
    toolCallCount: 0,
    inputTokens: 0,
    outputTokens: 0,
    activeTurnId: null,
    turnStartedAt: null,
    handoffState: null,
    handoffPlatform: null,
    handoffError: null,
    handoffRequestedAt: null,
    handoffClaimedAt: null,
    handoffFinishedAt: null,
    handoffChatId: null,
    handoffThread: 1,
    handoffDestChatId: null,
    handoffDestThreadId: null,
    handoffDestUrl: null,
    handoffFrom: null,
    instructions: null,
  };
}

/**
 * The session's row in the object's own storage: the source of truth for its title,
 * counters, running flag and handoff state. Every change marks it dirty; the D1 mirror
 * copies dirty rows behind the turns.
 */
export class RecordStore {
  readonly #sql: Sql;
  readonly #create: () => void;
  #cached: SessionRecord | null | undefined;
  /** Whether the tables exist (undefined: not looked yet); only this store creates them, and a deleted session's object gets a new store. */
  #present: boolean | undefined;
  /** Whether D1 lacks the stored row (undefined: not read yet); this object is the row's only writer. */
  #dirty: boolean | undefined;
  /** Bumped by every put: a copy marks the row clean only if nothing was put since it read it. */
  #version = 0;

  /**
   * `create` makes the object's tables (all of them): an object holds no storage until its
   * session is created, and none again once it is deleted.
   */
  constructor(sql: Sql, create: () => void) {
    this.#sql = sql;
    this.#create = create;
  }

  static readonly schema: ComponentSchema = ["session-record", SCHEMA];

  static migrate(sql: Sql): void {
    migrate(sql, ...this.schema);
  }

  /** Whether this storage holds the session table (any schema version). */
  static exists(sql: Sql): boolean {
    return sql.exec("SELECT 1 AS x FROM sqlite_master WHERE type = 'table' AND name = 'session'").length > 0;
  }

  /** Whether this storage holds the session table (looked up once: only this store makes it). */
  exists(): boolean {
    this.#present ??= RecordStore.exists(this.#sql);
    return this.#present;
  }

  /** Creates the tables if this storage has none yet (before a session is put or imported). */
  ensure(): void {
    if (this.exists()) return;
    this.#create();
    this.#present = true;
  }

  get(): SessionRecord | null {
    if (!this.exists()) return null;
    if (this.#cached === undefined) {
      const row = this.#sql.exec("SELECT row FROM session LIMIT 1")[0];
      this.#cached = row ? (JSON.parse(String(row.row)) as SessionRecord) : null;
    }
    return this.#cached;
  }

  /** Stores the row (creating it), marking it for the mirror. */
  put(rec: SessionRecord): SessionRecord {
    this.ensure();
    this.#sql.exec(
      "INSERT INTO session (id, row, dirty) VALUES (?, ?, 1) ON CONFLICT(id) DO UPDATE SET row = excluded.row, dirty = 1",
      rec.id,
      JSON.stringify(rec),
    );
    this.#cached = rec;
    this.#dirty = true;
    this.#version++;
    return rec;
  }

  /** Applies `patch` to the stored row; null when there is none. */
  update(patch: Partial<SessionRecord>): SessionRecord | null {
    const cur = this.get();
    return cur ? this.put({ ...cur, ...patch }) : null;
  }

  dirty(): boolean {
    if (!this.exists()) return false;
    this.#dirty ??= this.#sql.exec("SELECT 1 AS x FROM session WHERE dirty = 1").length > 0;
    return this.#dirty;
  }

  /** The stored row's version in this instance (see {@link markClean}). */
  get version(): number {
    return this.#version;
  }

  /** Marks the row clean if it is still the `version` that was copied (a put since then leaves it dirty). */
  markClean(version: number): void {
    if (version !== this.#version || this.#dirty === false) return;
    this.#sql.exec("UPDATE session SET dirty = 0");
    this.#dirty = false;
  }
}

/**
 * The row with what follows from its stored messages: counters, the last activity, and a
 * title from the first user message when it has none.
 */
export function withCounters(sql: Sql, rec: SessionRecord): SessionRecord {
  // One statement (the D1 copy runs this on every copy): the active messages' counters and the
  // tokens as usage counts them (the provider's, or the estimate when it reported none, so the
  // session, /v1/usage and the daily budget agree), from the row the triggers keep, and the
  // first user message when no title is set.
  const c = sql.exec(
    `SELECT n, at, calls, input AS i, output AS o,
            CASE WHEN ? = 1 THEN (SELECT content FROM messages
                                    WHERE session = ? AND role = 'user' AND content IS NOT NULL AND active = 1 ORDER BY id LIMIT 1) END AS first
       FROM (SELECT 1) LEFT JOIN counters ON counters.session = ?`,
    rec.title ? 0 : 1,
    rec.id,
    rec.id,
  )[0];
  const first = c?.first;
  return {
    ...rec,
    title: rec.title || (first !== null && first !== undefined ? titleFrom(String(first)) : null),
    messageCount: num(c?.n),
    inputTokens: num(c?.i),
    outputTokens: num(c?.o),
    toolCallCount: num(c?.calls),
    lastActiveAt: Math.max(rec.lastActiveAt, num(c?.at)),
  };
}
