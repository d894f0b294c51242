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
  /** Runs several statements without parameters in one call (a Durable Object's `exec` takes a script); without it they run one by one. */
  script?(statements: string): void;
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
    script: (statements) => void storage.sql.exec(statements).toArray(),
  };
}

/** Bound parameters per statement at most (a Durable Object's SQLite allows 100). */
const MAX_PARAMS = 100;

/**
 * Runs `UPDATE … WHERE <column> IN (…)` for `values`, at most {@link MAX_PARAMS} a statement:
 * one statement for a turn's rows instead of one per row. `update` is the statement up to
 * `WHERE`, `column` a column name of this code's.
 */
export function execIn(sql: Sql, update: string, column: string, values: readonly SqlValue[]): void {
  for (let i = 0; i < values.length; i += MAX_PARAMS) {
    const part = values.slice(i, i + MAX_PARAMS);
    sql.exec(`${update} WHERE ${column} IN (${part.map(() => "?").join(", ")})`, ...part);
  }
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

/** One component's name and its migration steps, oldest first. */
export type ComponentSchema = readonly [component: string, steps: readonly string[]];

const SCHEMA_TABLE = "CREATE TABLE IF NOT EXISTS _schema (component TEXT PRIMARY KEY, version INTEGER NOT NULL)";

/**
 * Versioned schema migrations for one component's tables (the turn queue, the transcript,
 * a Relay's buffer, …): each step runs once, in order, in one transaction with the
 * recorded version, on first use. Adding a column is a new step, never an edit of an old
 * one. Components share one `_schema` table, keyed by their name.
 */
export function migrate(sql: Sql, component: string, steps: readonly string[]): void {
  migrateAll(sql, [[component, steps]]);
}

/**
 * {@link migrate} for several components with one look at `_schema`. On a storage that has
 * none of them yet (a new session object) and a connection that runs scripts, every step
 * and version goes in one `exec`, in one transaction: one call instead of dozens.
 */
export function migrateAll(sql: Sql, components: readonly ComponentSchema[]): void {
  const rows = schemaRows(sql);
  const at = new Map((rows ?? []).map((r) => [String(r.component), num(r.version)]));
  for (const [component, steps] of components) {
    const v = at.get(component) ?? 0;
    if (v > steps.length) throw new Error(`${component}: stored schema version ${v} is newer than this code (${steps.length})`);
  }
  const due = components.filter(([component, steps]) => (at.get(component) ?? 0) < steps.length);
  if (due.length === 0) return;
  const fresh = due.length === components.length && at.size === 0;
  sql.transaction(() => {
    if (fresh && sql.script) {
      const statements = due.flatMap(([component, steps]) => [...steps.flatMap(splitStatements), versionStatement(component, steps.length)]);
      sql.script(`${[SCHEMA_TABLE, ...statements].join(";\n")};`);
      return;
    }
    if (rows === null) sql.exec(SCHEMA_TABLE);
    for (const [component, steps] of due) {
      for (const step of steps.slice(at.get(component) ?? 0)) {
        for (const statement of splitStatements(step)) sql.exec(statement);
      }
      sql.exec(
        "INSERT INTO _schema (component, version) VALUES (?, ?) ON CONFLICT(component) DO UPDATE SET version = excluded.version",
        component,
        steps.length,
      );
    }
  });
}

/**
 * The recorded versions, or null on a storage without the table (a new object). Looked up,
 * not read and caught: a failed statement costs workerd a thrown error, about 0.8 ms of a
 * new object's first message in bench:webhooks' profile.
 */
function schemaRows(sql: Sql): Row[] | null {
  if (sql.exec("SELECT 1 AS x FROM sqlite_master WHERE type = 'table' AND name = '_schema'").length === 0) return null;
  return sql.exec("SELECT component, version FROM _schema");
}

/** The `_schema` row of a component, as a statement of a script (names are code's constants, checked). */
function versionStatement(component: string, version: number): string {
  if (!/^[\w-]+$/.test(component) || !Number.isSafeInteger(version)) throw new Error(`bad schema component ${component} ${version}`);
  return `INSERT INTO _schema (component, version) VALUES ('${component}', ${version}) ON CONFLICT(component) DO UPDATE SET version = excluded.version`;
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
