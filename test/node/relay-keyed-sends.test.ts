import { DatabaseSync } from "node:sqlite";
import { describe, expect, it } from "vitest";
import { nodeSql } from "../../cli/gateway/sqlite.ts";
import { RelayStore, SEND_KEY_RETENTION_MS } from "../../durable-objects/relay/buffer.ts";

/** A Relay object's store on an in-memory SQLite database, with a clock the test sets. */
function store() {
  let now = 1_000_000;
  const s = new RelayStore(nodeSql(new DatabaseSync(":memory:")));
  return { sends: s.keyedSends(() => now), tick: (ms: number) => (now += ms) };
}

describe("a Relay object's keyed sends", () => {
  it("runs sends with one key one after another, others beside them, and a failed one does not hold up the next", async () => {
    const { sends } = store();
    const order: string[] = [];
    let release = () => {};
    const gate = new Promise<void>((r) => (release = r));
    const first = sends.inTurn("reply:t1", async () => {
      order.push("first starts");
      await gate;
      order.push("first ends");
      throw new Error("the platform refused it");
    });
    const second = sends.inTurn("reply:t1", async () => {
      order.push("second runs");
      return 2;
    });
    expect(await sends.inTurn("reply:t2", async () => (order.push("other key runs"), 3))).toBe(3);
    expect(order).toEqual(["first starts", "other key runs"]);
    release();
    await expect(first).rejects.toThrow("refused");
    expect(await second).toBe(2);
    expect(order).toEqual(["first starts", "other key runs", "first ends", "second runs"]);
  });

  it("remembers a send for 24 hours, the last one under a key", () => {
    const { sends, tick } = store();
    expect(sends.get("reply:t1")).toBeNull();
    sends.put("reply:t1", { contentHash: "a", result: '{"success":true,"message_id":"5"}' });
    sends.put("reply:t1", { contentHash: "b", result: '{"success":true,"message_id":"5"}' });
    expect(sends.get("reply:t1")).toEqual({ contentHash: "b", result: '{"success":true,"message_id":"5"}' });
    tick(SEND_KEY_RETENTION_MS);
    expect(sends.get("reply:t1")).not.toBeNull();
    tick(1);
    expect(sends.get("reply:t1")).toBeNull();
  });
});
