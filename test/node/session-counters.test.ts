import { DatabaseSync } from "node:sqlite";
import { describe, expect, it } from "vitest";
import { nodeSql } from "../../cli/gateway/sqlite.ts";
import { newRecord, RecordStore, withCounters } from "../../durable-objects/session-agent/record.ts";
import { migrateAll, SessionRuntime, type Sql } from "../../workers/runtime/index.ts";
import { SqlTranscript } from "../../workers/runtime/transcript.ts";
import { UsageStore } from "../../workers/runtime/usage.ts";

/** The counters as the D1 copy computed them before the triggers: an aggregate over every row. */
function aggregate(sql: Sql, session: string) {
  const r = sql.exec(
    `SELECT COUNT(*) AS n, COALESCE(SUM(CASE WHEN tool_calls IS NOT NULL THEN json_array_length(tool_calls) ELSE 0 END), 0) AS calls,
            (SELECT COALESCE(SUM(input), 0) FROM usage_turns WHERE session = ?) AS i,
            (SELECT COALESCE(SUM(output), 0) FROM usage_turns WHERE session = ?) AS o
       FROM messages WHERE session = ? AND active = 1`,
    session,
    session,
    session,
  )[0]!;
  return { messageCount: Number(r.n), toolCallCount: Number(r.calls), inputTokens: Number(r.i), outputTokens: Number(r.o) };
}

const counters = (sql: Sql, id: string) => {
  const c = withCounters(sql, { ...newRecord({ source: "cli", model: "m" }, 0, id), title: "set" });
  return { messageCount: c.messageCount, toolCallCount: c.toolCallCount, inputTokens: c.inputTokens, outputTokens: c.outputTokens };
};

const call = (id: string) => ({ id, type: "function" as const, function: { name: "f", arguments: "{}" } });

describe("a session's counters (messages, tool calls, tokens), kept by triggers instead of a whole-transcript aggregate per D1 copy", () => {
  it("match the aggregate through appends, imports, a turn set inactive and usage recorded again, for each session apart", () => {
    const sql = nodeSql(new DatabaseSync(":memory:"));
    migrateAll(sql, [...SessionRuntime.schemas, RecordStore.schema]);
    for (const id of ["s1", "s2"]) {
      const t = new SqlTranscript(sql, id);
      const u = new UsageStore(sql, id);
      t.append([{ message: { role: "user", content: "hi" }, turnId: `${id}-a`, at: 10 }]);
      t.append([{ message: { role: "assistant", content: null, tool_calls: [call("1"), call("2")] }, turnId: `${id}-a`, at: 11 }]);
      t.append([{ message: { role: "tool", content: "ok", tool_call_id: "1" }, turnId: `${id}-a`, at: 12 }]);
      u.record(`${id}-a`, "cli", { input: 100, output: 20 }, 12);
      t.append([{ message: { role: "user", content: "again" }, turnId: `${id}-b`, at: 20 }]);
      t.append([{ message: { role: "assistant", content: null, tool_calls: [call("3")] }, turnId: `${id}-b`, at: 21 }]);
      u.record(`${id}-b`, "cli", { input: 50, output: 5 }, 21);
      // Recorded again (the provider's count replaces the estimate).
      u.record(`${id}-b`, "cli", { input: 60, output: 7 }, 21);
      expect(counters(sql, id)).toEqual(aggregate(sql, id));
      // A retried turn's messages leave the transcript.
      t.deactivateTurn(`${id}-b`);
      expect(counters(sql, id)).toEqual(aggregate(sql, id));
      t.importRows([{ id: 9000 + (id === "s1" ? 1 : 2), message: { role: "assistant", content: null, tool_calls: [call("9")] }, turnId: `${id}-c`, at: 30 }]);
      expect(counters(sql, id)).toEqual(aggregate(sql, id));
      // Marking rows copied changes nothing.
      t.markSynced(t.unsynced().map((m) => m.id));
      u.markSynced([`${id}-a`, `${id}-b`]);
      expect(counters(sql, id)).toEqual(aggregate(sql, id));
    }
    expect(counters(sql, "s1")).toEqual({ messageCount: 4, toolCallCount: 3, inputTokens: 160, outputTokens: 27 });
    expect(counters(sql, "nobody")).toEqual({ messageCount: 0, toolCallCount: 0, inputTokens: 0, outputTokens: 0 });
  });

  it("a storage made before the triggers is filled from its rows when the object next starts", () => {
    const db = new DatabaseSync(":memory:");
    const sql = nodeSql(db);
    // The session record's first schema version only: no counters table yet.
    migrateAll(sql, [...SessionRuntime.schemas, ["session-record", RecordStore.schema[1].slice(0, 1)]]);
    const t = new SqlTranscript(sql, "old");
    t.append([{ message: { role: "user", content: "hi" }, turnId: "a", at: 10 }]);
    t.append([{ message: { role: "assistant", content: null, tool_calls: [call("1")] }, turnId: "a", at: 11 }]);
    new UsageStore(sql, "old").record("a", "cli", { input: 7, output: 3 }, 11);
    expect(db.prepare("SELECT name FROM sqlite_master WHERE name = 'counters'").all()).toEqual([]);
    migrateAll(sql, [...SessionRuntime.schemas, RecordStore.schema]);
    expect(counters(sql, "old")).toEqual({ messageCount: 2, toolCallCount: 1, inputTokens: 7, outputTokens: 3 });
    t.append([{ message: { role: "user", content: "more" }, turnId: "b", at: 20 }]);
    expect(counters(sql, "old")).toEqual(aggregate(sql, "old"));
  });
});
