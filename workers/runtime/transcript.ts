import type { ChatMessage, ToolCall, Usage } from "../agent/index.ts";
import { execIn, MissingRowError, migrate, type ComponentSchema, num, str, type Row, type Sql, type SqlValue, SessionRows } from "./sql.ts";

/** One stored transcript message with the facts kept beside it. */
export interface StoredMessage {
  id: number;
  session: string;
  message: ChatMessage;
  turnId: string | null;
  usage: Usage | null;
  /** The model that wrote an assistant message (`offline` marks the built-in model). */
  model: string | null;
  /** Whose turn it was (`<platform>:<user id>`, or `cli`). */
  userKey: string | null;
  createdAt: number;
  active: boolean;
}

/** A message to append. */
export interface NewMessage {
  message: ChatMessage;
  turnId?: string | null;
  usage?: Usage | undefined;
  model?: string | null;
  userKey?: string | null;
  at: number;
}

/** The columns a stored message is written with, and their values (see {@link columnValues}). */
const COLUMNS = "session, role, content, tool_calls, tool_call_id, name, finish_reason, turn_id, input_tokens, output_tokens, model, user_key, created_at";
const COLUMN_COUNT = 13;
const marks = (n: number) => Array.from({ length: n }, () => "?").join(", ");

function columnValues(session: string, { message: m, turnId, usage, model, userKey, at }: NewMessage): SqlValue[] {
  return [
    session,
    m.role,
    m.content,
    m.tool_calls ? JSON.stringify(m.tool_calls) : null,
    m.tool_call_id ?? null,
    m.name ?? null,
    m.finish_reason ?? null,
    turnId ?? null,
    usage ? usage.input : null,
    usage ? usage.output : null,
    model ?? null,
    userKey ?? null,
    at,
  ];
}

const SCHEMA = [
  `CREATE TABLE messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session TEXT NOT NULL,
    role TEXT NOT NULL,
    content TEXT,
    tool_calls TEXT,
    tool_call_id TEXT,
    name TEXT,
    finish_reason TEXT,
    turn_id TEXT,
    input_tokens INTEGER,
    output_tokens INTEGER,
    model TEXT,
    created_at INTEGER NOT NULL,
    active INTEGER NOT NULL DEFAULT 1,
    synced INTEGER NOT NULL DEFAULT 0
  );
  CREATE INDEX messages_by_session ON messages (session, id);
  CREATE INDEX messages_unsynced ON messages (synced) WHERE synced = 0`,
  // Whose turn a message belongs to (usage per platform user).
  `ALTER TABLE messages ADD COLUMN user_key TEXT`,
];

function calls(v: Row[string] | undefined): ToolCall[] | undefined {
  if (typeof v !== "string" || v === "") return undefined;
  try {
    const parsed = JSON.parse(v) as unknown;
    return Array.isArray(parsed) && parsed.length > 0 ? (parsed as ToolCall[]) : undefined;
  } catch {
    return undefined;
  }
}

/** A stored row as a transcript message (unrepaired: callers repair before use). */
export function rowMessage(r: Row): ChatMessage {
  const m: ChatMessage = { role: String(r.role) as ChatMessage["role"], content: str(r.content ?? null) };
  const c = calls(r.tool_calls);
  if (c) m.tool_calls = c;
  if (r.tool_call_id) m.tool_call_id = String(r.tool_call_id);
  if (r.name) m.name = String(r.name);
  if (r.finish_reason) m.finish_reason = String(r.finish_reason) as ChatMessage["finish_reason"];
  // Which model wrote it: offline replies are never sent to a real model as history.
  if (r.model && r.role === "assistant") m.model = String(r.model);
  return m;
}

function stored(r: Row): StoredMessage {
  const hasUsage = r.input_tokens !== null || r.output_tokens !== null;
  return {
    id: num(r.id),
    session: String(r.session),
    message: rowMessage(r),
    turnId: str(r.turn_id),
    usage: hasUsage ? { input: num(r.input_tokens), output: num(r.output_tokens) } : null,
    model: str(r.model),
    userKey: str(r.user_key ?? null),
    createdAt: num(r.created_at),
    active: num(r.active) === 1,
  };
}

/**
 * A session's transcript in local SQLite (a Durable Object's storage at the edge,
 * `node:sqlite` on a gateway): the source the runtime serves turns from. Appends are
 * synchronous and durable when they return. `synced` marks rows already copied to D1
 * (the edge mirrors the transcript there; the gateway never syncs).
 */
export class SqlTranscript extends SessionRows {
  static readonly schema: ComponentSchema = ["transcript", SCHEMA];

  static migrate(sql: Sql): void {
    migrate(sql, ...this.schema);
  }

  /** The active messages after message `afterId` (0: all), oldest first, with their ids. */
  load(afterId = 0): Array<{ id: number; message: ChatMessage }> {
    return this.sql
      .exec("SELECT * FROM messages WHERE session = ? AND active = 1 AND id > ? ORDER BY id", this.session, afterId)
      .map((r) => ({ id: num(r.id), message: rowMessage(r) }));
  }

  /** Every stored message with its facts (for the API and exports), oldest first. */
  rows(opts: { includeInactive?: boolean } = {}): StoredMessage[] {
    const q = opts.includeInactive
      ? "SELECT * FROM messages WHERE session = ? ORDER BY id"
      : "SELECT * FROM messages WHERE session = ? AND active = 1 ORDER BY id";
    return this.sql.exec(q, this.session).map(stored);
  }

  count(): number {
    return num(this.sql.exec("SELECT COUNT(*) AS n FROM messages WHERE session = ? AND active = 1", this.session)[0]?.n ?? 0);
  }

  /** Appends messages in order, in one transaction; returns their ids. */
  append(items: readonly NewMessage[], opts: { synced?: boolean } = {}): number[] {
    return this.sql.transaction(() => items.map((item) => this.appendOne(item, opts)));
  }

  /** Appends one message; returns its id. */
  appendOne(item: NewMessage, opts: { synced?: boolean } = {}): number {
    const row = this.sql.exec(
      `INSERT INTO messages (${COLUMNS}, synced) VALUES (${marks(COLUMN_COUNT + 1)}) RETURNING id`,
      ...columnValues(this.session, item),
      opts.synced ? 1 : 0,
    )[0];
    if (!row) throw new MissingRowError(`session ${this.session}: INSERT INTO messages … RETURNING id returned no row`);
    return num(row.id);
  }

  /**
   * Stores messages copied from elsewhere (D1, an import) under their own ids, as already
   * synced unless `synced: false`; ids already present are skipped. Later appends get higher ids.
   */
  importRows(items: ReadonlyArray<NewMessage & { id: number; active?: boolean }>, opts: { synced?: boolean } = {}): void {
    this.sql.transaction(() => {
      for (const item of items) {
        this.sql.exec(
          `INSERT OR IGNORE INTO messages (id, ${COLUMNS}, active, synced) VALUES (${marks(COLUMN_COUNT + 3)})`,
          item.id,
          ...columnValues(this.session, item),
          item.active === false ? 0 : 1,
          opts.synced === false ? 0 : 1,
        );
      }
    });
  }

  /** Whether the user message that opened `turnId` is stored (a re-run must not store it twice). */
  hasTurnUser(turnId: string): boolean {
    return this.sql.exec("SELECT 1 AS x FROM messages WHERE session = ? AND turn_id = ? AND role = 'user' LIMIT 1", this.session, turnId).length > 0;
  }

  /**
   * The answer `turnId` ended with, if it is stored: its last message is an assistant reply
   * that is neither a tool call nor a failure. A turn re-run after a restart that finds one
   * only has to deliver it (asking the model again would answer twice).
   */
  storedAnswer(turnId: string): ChatMessage | null {
    const row = this.sql.exec("SELECT * FROM messages WHERE session = ? AND turn_id = ? AND active = 1 ORDER BY id DESC LIMIT 1", this.session, turnId)[0];
    if (!row) return null;
    const m = rowMessage(row);
    return m.role === "assistant" && !m.tool_calls && m.finish_reason !== "error" && m.finish_reason !== "tool_calls" ? m : null;
  }

  /** Hides a turn's messages from replay without deleting them (an abandoned handoff notice). */
  deactivateTurn(turnId: string): number {
    const rows = this.sql.exec(
      "UPDATE messages SET active = 0, synced = 0 WHERE session = ? AND turn_id = ? AND active = 1 RETURNING id",
      this.session,
      turnId,
    );
    return rows.length;
  }

  /** The newest stored id among messages created before `cutoff` (0: none). */
  lastIdBefore(cutoff: number): number {
    return num(this.sql.exec("SELECT MAX(id) AS id FROM messages WHERE session = ? AND created_at < ?", this.session, cutoff)[0]?.id);
  }

  /** Deletes up to `limit` messages created before `cutoff` (retention); returns how many, and their turns. */
  deleteBefore(cutoff: number, limit = 1000): { deleted: number; turnIds: string[] } {
    const rows = this.sql.exec(
      "DELETE FROM messages WHERE id IN (SELECT id FROM messages WHERE session = ? AND created_at < ? ORDER BY id LIMIT ?) RETURNING turn_id",
      this.session,
      cutoff,
      limit,
    );
    const turnIds = [...new Set(rows.map((r) => str(r.turn_id)).filter((t): t is string => t !== null))];
    return { deleted: rows.length, turnIds };
  }

  /** Rows not yet copied to D1, oldest first. */
  unsynced(limit = 200): StoredMessage[] {
    return this.sql.exec("SELECT * FROM messages WHERE session = ? AND synced = 0 ORDER BY id LIMIT ?", this.session, limit).map(stored);
  }

  markSynced(ids: readonly number[]): void {
    execIn(this.sql, "UPDATE messages SET synced = 1", "id", ids);
  }
}
