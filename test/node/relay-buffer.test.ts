import { DatabaseSync } from "node:sqlite";
import { describe, expect, it } from "vitest";
import { nodeSql } from "../../cli/gateway/sqlite.ts";
import { RelayStore } from "../../durable-objects/relay/buffer.ts";

describe("the relay buffer when full", () => {
  it("one user flooding evicted another chat's message: a full buffer drops from the chat with the most frames waiting", () => {
    const store = new RelayStore(nodeSql(new DatabaseSync(":memory:")));
    let n = 0;
    const put = (chat: string, text: string) => store.buffer(`b${++n}`, `d${n}`, text, n, 5, null, chat);
    expect(put("telegram:quiet", "the quiet user's one message")).toBe(0);
    for (let i = 0; i < 4; i++) expect(put("telegram:flood", `flood ${i}`)).toBe(0);
    for (let i = 4; i < 10; i++) expect(put("telegram:flood", `flood ${i}`)).toBe(1);
    const kept = store.unsent("conn").map((f) => f.frame);
    expect(kept).toEqual(["the quiet user's one message", "flood 6", "flood 7", "flood 8", "flood 9"]);
    expect(store.dropped()).toBe(6);
  });

  it("among chats with as many frames waiting, the one whose oldest frame is oldest loses it", () => {
    const store = new RelayStore(nodeSql(new DatabaseSync(":memory:")));
    let n = 0;
    const put = (chat: string, text: string) => store.buffer(`b${++n}`, `d${n}`, text, n, 4, null, chat);
    put("a", "a1");
    put("b", "b1");
    put("a", "a2");
    put("b", "b2");
    expect(put("c", "c1")).toBe(1);
    expect(store.unsent("conn").map((f) => f.frame)).toEqual(["b1", "a2", "b2", "c1"]);
  });
});
