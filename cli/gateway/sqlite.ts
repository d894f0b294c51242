import type { DatabaseSync } from "node:sqlite";
import type { Row, Sql, SqlValue } from "../../workers/runtime/index.ts";

/**
 * A `node:sqlite` database as the runtime's {@link Sql}: the gateway keeps its queue,
 * transcripts and deliveries in the same tables (and the same code) as the edge's
 * Durable Objects. Nested transactions join the outer one.
 */
export function nodeSql(db: DatabaseSync): Sql {
  return {
    exec(query: string, ...params: SqlValue[]): Row[] {
      return db.prepare(query).all(...params) as Row[];
    },
    script(statements: string): void {
      db.exec(statements);
    },
    transaction<T>(fn: () => T): T {
      if (db.isTransaction) return fn();
      db.exec("BEGIN IMMEDIATE");
      try {
        const out = fn();
        db.exec("COMMIT");
        return out;
      } catch (err) {
        db.exec("ROLLBACK");
        throw err;
      }
    },
  };
}
