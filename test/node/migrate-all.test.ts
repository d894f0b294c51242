import { DatabaseSync } from "node:sqlite";
import { describe, expect, it } from "vitest";
import { nodeSql } from "../../cli/gateway/sqlite.ts";
import { RecordStore } from "../../durable-objects/session-agent/record.ts";
import { migrateAll, SessionRuntime, type Sql } from "../../workers/runtime/index.ts";
import { execIn } from "../../workers/runtime/sql.ts";

/** node:sqlite as the runtime's Sql, counting the calls a Durable Object would pay for. */
function counted() {
  const db = new DatabaseSync(":memory:");
  const inner = nodeSql(db);
  const calls = { exec: 0, script: 0 };
  const sql: Sql = {
    exec: (q, ...p) => (calls.exec++, inner.exec(q, ...p)),
    transaction: (fn) => inner.transaction(fn),
    script: (s) => (calls.script++, inner.script?.(s)),
  };
  return { db, sql, calls };
}

const schemas = [...SessionRuntime.schemas, RecordStore.schema];
const tables = (db: DatabaseSync) =>
  db
    .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
    .all()
    .map((r) => r.name);

describe("a session object's schema", () => {
  it("a new session object created its tables in dozens of statements: now one script, after one look for _schema", () => {
    const { db, sql, calls } = counted();
    migrateAll(sql, schemas);
    // The look in sqlite_master, then the script (which makes _schema too): no statement that fails.
    expect(calls).toEqual({ exec: 1, script: 1 });
    // The same tables and versions as migrating component by component.
    const one = new DatabaseSync(":memory:");
    for (const [component, steps] of schemas) migrateAll(nodeSql(one), [[component, steps]]);
    expect(tables(db)).toEqual(tables(one));
    const versions = (d: DatabaseSync) => d.prepare("SELECT component, version FROM _schema ORDER BY component").all();
    expect(versions(db)).toEqual(versions(one));
    expect(versions(db)).toHaveLength(schemas.length);
    // Up to date (every start of an object after its first): the look and the versions.
    migrateAll(sql, schemas);
    expect(calls).toEqual({ exec: 3, script: 1 });
  });

  it("a storage that runs no scripts gets _schema and every step statement by statement", () => {
    const { db, sql, calls } = counted();
    const { script: _none, ...plain } = sql;
    migrateAll(plain, schemas);
    expect(calls.script).toBe(0);
    const one = new DatabaseSync(":memory:");
    migrateAll(nodeSql(one), schemas);
    expect(tables(db)).toEqual(tables(one));
    expect(db.prepare("SELECT count(*) AS n FROM _schema").get()).toEqual({ n: schemas.length });
  });

  it("upgrades a storage that is behind step by step, and refuses one newer than the code", () => {
    const { db, sql, calls } = counted();
    const steps = ["CREATE TABLE a (x TEXT)", "ALTER TABLE a ADD COLUMN y TEXT;\nCREATE TABLE b (z TEXT)"];
    migrateAll(sql, [["demo", steps.slice(0, 1)]]);
    migrateAll(sql, [["demo", steps], ...schemas]);
    expect(calls.script).toBe(1); // only the first, fresh storage ran a script
    expect(db.prepare("SELECT version FROM _schema WHERE component = ?").get("demo")).toEqual({ version: 2 });
    expect(tables(db)).toEqual(expect.arrayContaining(["a", "b", "turns"]));
    db.prepare("INSERT INTO a (x, y) VALUES ('1', '2')").run();
    expect(() => migrateAll(sql, [["demo", steps.slice(0, 1)]])).toThrow(/newer than this code/);
  });
});

describe("the D1 copy's bookkeeping", () => {
  it("marked the copied rows synced one statement per row: now one per 100", () => {
    const { db, sql, calls } = counted();
    db.exec("CREATE TABLE m (id INTEGER PRIMARY KEY, synced INTEGER NOT NULL DEFAULT 0)");
    for (let i = 1; i <= 260; i++) db.prepare("INSERT INTO m (id) VALUES (?)").run(i);
    const ids = Array.from({ length: 250 }, (_, i) => i + 1);
    execIn(sql, "UPDATE m SET synced = 1", "id", ids);
    expect(calls.exec).toBe(3);
    expect(db.prepare("SELECT COUNT(*) AS n FROM m WHERE synced = 1").get()).toEqual({ n: 250 });
    execIn(sql, "UPDATE m SET synced = 1", "id", []);
    expect(calls.exec).toBe(3);
  });
});
