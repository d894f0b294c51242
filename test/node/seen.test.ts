import { DatabaseSync } from "node:sqlite";
import { describe, expect, it } from "vitest";
import { nodeSql } from "../../cli/gateway/sqlite.ts";
import { SEEN_RETENTION_MS, SeenDeliveries, type SeenTable } from "../../workers/runtime/seen.ts";

/** A storage with the table as its owner's migration makes it. */
function store(table: SeenTable = "seen") {
  const sql = nodeSql(new DatabaseSync(":memory:"));
  sql.exec(`CREATE TABLE ${table} (delivery_key TEXT PRIMARY KEY, at INTEGER NOT NULL)`);
  sql.exec(`CREATE INDEX ${table}_at ON ${table} (at)`);
  return { sql, seen: new SeenDeliveries(sql, table) };
}

const T0 = 1_700_000_000_000;

describe("the one store of deliveries already seen", () => {
  it("says first once per key, and has it afterwards", () => {
    const { seen } = store();
    expect(seen.has("telegram:1")).toBe(false);
    expect(seen.first("telegram:1", T0)).toBe(true);
    expect(seen.first("telegram:1", T0 + 1)).toBe(false);
    expect(seen.first("slack:1", T0 + 2)).toBe(true);
    expect(seen.has("telegram:1")).toBe(true);
  });

  it("forgets a key only after the one retention, counted from when it was last remembered", () => {
    const { seen } = store();
    seen.first("telegram:old", T0);
    seen.first("telegram:kept", T0);
    seen.remember("telegram:kept", T0 + 1000);
    seen.prune(T0 + SEEN_RETENTION_MS);
    expect([seen.has("telegram:old"), seen.has("telegram:kept")]).toEqual([true, true]);
    seen.prune(T0 + SEEN_RETENTION_MS + 1);
    expect([seen.has("telegram:old"), seen.has("telegram:kept")]).toEqual([false, true]);
    // A take-in prunes on its way: a key past the retention is new again.
    expect(seen.first("telegram:kept", T0 + 1000 + SEEN_RETENTION_MS + 1)).toBe(true);
  });

  it("reads keys a Relay stored before the unification, in its own `relayed` table", () => {
    const { sql, seen } = store("relayed");
    sql.exec("INSERT INTO relayed (delivery_key, at) VALUES (?, ?)", "discord:42", T0);
    expect(seen.first("discord:42", T0 + 1)).toBe(false);
    expect(seen.has("discord:42")).toBe(true);
  });
});
