import { DatabaseSync } from "node:sqlite";
import { describe, expect, it } from "vitest";
import { nodeSql } from "../../cli/gateway/sqlite.ts";
import { SENT_RETENTION_MS, SentStore } from "../../workers/runtime/sent.ts";

function store(session = "s1"): SentStore {
  const sql = nodeSql(new DatabaseSync(":memory:"));
  SentStore.migrate(sql);
  return new SentStore(sql, session);
}

describe("SentStore: which message showed which turn's reply", () => {
  it("finds the turn of an id kept with an adapter's ~suffix, but not of an id that only starts the same", () => {
    const s = store();
    s.record("t1", ["wamid.A~12~0badcafe", "wamid.B"], 1000);
    expect(s.turnOf("wamid.A")).toBe("t1");
    expect(s.turnOf("wamid.B")).toBe("t1");
    expect(s.turnOf("wamid.")).toBeNull();
    expect(s.turnOf("wamid.A~1")).toBeNull();
    expect(s.turnOf("wamid.C")).toBeNull();
  });

  it("keeps the first reason a reply failed for, and forgets sent ids older than the retention", () => {
    const s = store();
    s.record("t1", ["m1"], 0);
    s.fail("t1", "first", 5);
    s.fail("t1", "second", 6);
    expect(s.failures()).toEqual(new Map([["t1", "first"]]));
    s.record("t2", ["m2"], SENT_RETENTION_MS + 1);
    expect(s.turnOf("m1")).toBeNull();
    expect(s.turnOf("m2")).toBe("t2");
  });
});
