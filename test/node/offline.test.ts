import { describe, expect, it } from "vitest";
import { OFFLINE_NOTICE, OfflineModel, offlineReply, type ChatMessage } from "../../workers/agent/index.ts";

const convo = (...texts: string[]): ChatMessage[] => texts.map((t, i) => ({ role: i % 2 === 0 ? "user" : "assistant", content: t }));

describe("offline model", () => {
  it("says plainly it is offline and how to configure a real model, and answers from the conversation", () => {
    const reply = offlineReply(convo("hello there"));
    expect(reply.startsWith(OFFLINE_NOTICE)).toBe(true);
    expect(reply).toContain("LLM_BASE_URL");
    expect(reply).toContain('You said: "hello there"');
    expect(offlineReply(convo("hello there"))).toBe(reply);
  });

  it("summarises the conversation when asked, deterministically", () => {
    const history = convo("plan the trip", offlineReply(convo("plan the trip")), "book the hotel", "ok", "please summarise where we are");
    const reply = offlineReply(history);
    expect(reply).toContain("Summary: so far you sent 2 messages:");
    expect(reply).toContain("1. plan the trip");
    expect(reply).toContain("2. book the hotel");
    expect(reply.startsWith("(offline model)\n")).toBe(true);
  });

  it("with no delay, hands on every word in one go unless the reader asks for a pause", async () => {
    // Regression (found in review): awaiting every word's onText, pause or not, handed a
    // platform's live reply the words one microtask apart: posted partly, then edited.
    const m = new OfflineModel({ delayMs: 0 });
    const words: string[] = [];
    const whenFirstMicrotaskRan: number[] = [];
    const res = await m.complete({
      messages: convo("hello"),
      onText: (t) => {
        words.push(t);
        if (words.length === 1) queueMicrotask(() => whenFirstMicrotaskRan.push(words.length));
      },
    });
    expect(words.length).toBeGreaterThan(3);
    expect(whenFirstMicrotaskRan).toEqual([words.length]);
    expect(words.join("")).toBe(res.content);
    // A reader that asks for a pause after the first word gets it before the second.
    const paused: string[] = [];
    await m.complete({
      messages: convo("hello"),
      onText: (t): Promise<void> | undefined => {
        paused.push(t);
        if (paused.length > 1) return undefined;
        return new Promise((resolve) => setTimeout(() => (paused.push("(pause)"), resolve()), 0));
      },
    });
    expect(paused[1]).toBe("(pause)");
  });

  it("streams word by word and stops where it is interrupted", async () => {
    const ctrl = new AbortController();
    const pieces: string[] = [];
    const m = new OfflineModel({ delayMs: 5, sleep: async () => undefined });
    const res = await m.complete({
      messages: convo("hello"),
      signal: ctrl.signal,
      onText: (t) => {
        pieces.push(t);
        if (pieces.length === 3) ctrl.abort();
      },
    });
    expect(res.finishReason).toBe("interrupted");
    expect(res.content).toBe(pieces.join(""));
    expect(pieces).toHaveLength(3);
  });
});
