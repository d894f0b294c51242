/**
 * The one storage interface of the turn runtime: a synchronous SQLite connection. A Durable
 * Object's `ctx.storage.sql` and Node's `node:sqlite` both implement it (see
 * {@link durableSql} and the gateway's store), so the queue, transcript and delivery tables
 * are the same code at the edge and on a relay gateway.
 */

/** A value SQLite takes as a parameter (booleans are stored as 0/1 by the callers). */
export type SqlValue = string | number | null;

/** One result row. */
export type Row = Record<string, SqlValue>;

export interface Sql {
  /** Runs one statement; returns its rows (none for writes without RETURNING). */
  exec(query: string, ...params: SqlValue[]): Row[];
  /** Runs `fn` atomically: all of its statements commit together, or none. */
  transaction<T>(fn: () => T): T;
}

/** The subset of a Durable Object's storage the runtime uses. */
export interface DurableStorageLike {
  sql: { exec(query: string, ...params: SqlValue[]): { toArray(): unknown[] } };
  transactionSync<T>(fn: () => T): T;
}

/** A Durable Object's SQLite storage as {@link Sql}. */
export function durableSql(storage: DurableStorageLike): Sql {
  return {
    exec: (query, ...params) => storage.sql.exec(query, ...params).toArray() as Row[],
    transaction: (fn) => storage.transactionSync(fn),
  };
}

/** A string column, or null. */
export function str(v: SqlValue | undefined): string | null {
  return v === null || v === undefined ? null : String(v);
}

/** A number column (0 when null). */
export function num(v: SqlValue | undefined): number {
  return v === null || v === undefined ? 0 : Number(v);
}

/** A statement that must return a row (`INSERT … RETURNING`, a row written just before) returned none. */
export class MissingRowError extends Error {
  override readonly name = "MissingRowError";
}

/**
 * Versioned schema migrations for one component's tables (the turn queue, the transcript,
 * a Relay's buffer, …): each step runs once, in order, in one transaction with the
 * recorded version, on first use. Adding a column is a new step, never an edit of an old
 * one. Components share one `_schema` table, keyed by their name.
 */
export function migrate(sql: Sql, component: string, steps: readonly string[]): void {
  sql.exec("CREATE TABLE IF NOT EXISTS _schema (component TEXT PRIMARY KEY, version INTEGER NOT NULL)");
  const row = sql.exec("SELECT version FROM _schema WHERE component = ?", component)[0];
  const at = row ? num(row.version) : 0;
  if (at > steps.length) throw new Error(`${component}: stored schema version ${at} is newer than this code (${steps.length})`);
  if (at === steps.length) return;
  sql.transaction(() => {
    for (const step of steps.slice(at)) {
      for (const statement of splitStatements(step)) sql.exec(statement);
    }
    sql.exec("INSERT INTO _schema (component, version) VALUES (?, ?) ON CONFLICT(component) DO UPDATE SET version = excluded.version", component, steps.length);
  });
}

/** A migration step may hold several statements separated by `;` at line ends. */
function splitStatements(step: string): string[] {
  return step
    .split(/;\s*(?:\n|$)/)
    .map((s) => s.trim())
    .filter(Boolean);
}

/**
 * One session's rows in a storage's SQLite (a Durable Object's storage at the edge,
 * `node:sqlite` on a gateway): what every store of the runtime is built on.
 */
export abstract class SessionRows {
  protected readonly sql: Sql;
  protected readonly session: string;

  constructor(sql: Sql, session: string) {
    this.sql = sql;
    this.session = session;
  }
}
