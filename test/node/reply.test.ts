import { describe, expect, it } from "vitest";
import type { TurnOutcome } from "../../workers/agent/index.ts";
import { PlatformReply, STOPPED_TEXT } from "../../workers/platforms/reply.ts";
import { ManualClock } from "../support/manual-clock.ts";
import { PlatformApiError, type Capabilities, type PlatformAdapter, type ReplyTarget } from "../../workers/platforms/types.ts";

/** Starts at 0, so the times the tests assert are offsets from the first event. */
const newClock = () => new ManualClock(0);

function fakeAdapter(caps: Partial<Capabilities> = {}) {
  const log: Array<{ at: number; op: string; text?: string }> = [];
  const failures: PlatformApiError[] = [];
  let clock: ManualClock;
  const adapter: PlatformAdapter = {
    name: "telegram",
    capabilities: { maxMessageLength: 20, lengthUnit: "utf16", threads: true, edits: true, typing: true, editIntervalMs: { private: 1100, group: 3100 }, ...caps },
    verify: async () => ({ ok: true }),
    parse: async () => ({ kind: "ignore", reason: "" }),
    acknowledge: () => new Response(),
    async send(_t, text) {
      const f = failures.shift();
      if (f) throw f;
      log.push({ at: clock.now(), op: "send", text });
      return { messageId: String(log.length) };
    },
    async edit(_t, _id, text) {
      log.push({ at: clock.now(), op: "edit", text });
    },
    async typing() {
      log.push({ at: clock.now(), op: "typing" });
    },
    createHandoffThread: async () => null,
    sourceFor: async () => {
      throw new Error("unused");
    },
  };
  return { adapter, log, failures, bindClock: (c: ManualClock) => (clock = c) };
}

const target = (isPrivate: boolean): ReplyTarget => ({ platform: "telegram", chatId: "1", isPrivate });
const done = (finishReason: TurnOutcome["finishReason"] = "stop"): TurnOutcome => ({ finishReason, text: "", usage: { input: 0, output: 0 }, toolCalls: 0 });

describe("streamed platform replies", () => {
  it("sends the first text at once, then edits no more often than every 1.1 s in a private chat", async () => {
    const clock = newClock();
    const f = fakeAdapter();
    f.bindClock(clock);
    const reply = new PlatformReply(f.adapter, target(true), clock);
    reply.start();
    reply.event({ type: "text", text: "a" });
    await clock.advanceSettling(0);
    for (let i = 0; i < 10; i++) {
      reply.event({ type: "text", text: "b" });
      await clock.advanceSettling(200);
    }
    await reply.end(done());
    const edits = f.log.filter((e) => e.op !== "typing");
    expect(edits[0]).toEqual({ at: 0, op: "send", text: "a" });
    const times = edits.map((e) => e.at);
    for (let i = 1; i < times.length - 1; i++) expect(times[i]! - times[i - 1]!).toBeGreaterThanOrEqual(1100);
    expect(edits.at(-1)!.text).toBe("abbbbbbbbbb".slice(0, 20));
  });

  it("waits 3.1 s between edits in a group", async () => {
    const clock = newClock();
    const f = fakeAdapter();
    f.bindClock(clock);
    const reply = new PlatformReply(f.adapter, target(false), clock);
    reply.event({ type: "text", text: "x" });
    await clock.advanceSettling(0);
    reply.event({ type: "text", text: "y" });
    await clock.advanceSettling(3000);
    expect(f.log.filter((e) => e.op === "edit")).toHaveLength(0);
    await clock.advanceSettling(200);
    expect(f.log.filter((e) => e.op === "edit")).toEqual([{ at: 3100, op: "edit", text: "xy" }]);
  });

  it("splits the final text at the limit into the edited message plus new ones", async () => {
    const clock = newClock();
    const f = fakeAdapter();
    f.bindClock(clock);
    const reply = new PlatformReply(f.adapter, target(true), clock);
    reply.event({ type: "text", text: "one two three four five six seven eight nine" });
    await clock.advanceSettling(0);
    await reply.end(done());
    const texts = f.log.filter((e) => e.op !== "typing").map((e) => `${e.op}:${e.text}`);
    expect(texts).toEqual(["send:one two three four", "send:five six seven", "send:eight nine"]);
  });

  it("refreshes typing while the turn runs and stops when it ends", async () => {
    const clock = newClock();
    const f = fakeAdapter();
    f.bindClock(clock);
    const reply = new PlatformReply(f.adapter, target(true), clock);
    reply.start();
    await clock.advanceSettling(9000);
    await reply.end(done("interrupted"));
    await clock.advanceSettling(20_000);
    expect(f.log.filter((e) => e.op === "typing").map((e) => e.at)).toEqual([0, 4000, 8000]);
    expect(f.log.at(-1)).toMatchObject({ op: "send", text: STOPPED_TEXT });
  });

  it("honours a 429 retry_after before trying again", async () => {
    const clock = newClock();
    const f = fakeAdapter();
    f.bindClock(clock);
    f.failures.push(new PlatformApiError("telegram", "rate_limited", "Too Many Requests", { status: 429, retryAfter: 7 }));
    const reply = new PlatformReply(f.adapter, target(true), clock);
    reply.event({ type: "text", text: "hello" });
    await clock.advanceSettling(0);
    const ending = reply.end(done());
    await clock.advanceSettling(6999);
    expect(f.log.filter((e) => e.op === "send")).toHaveLength(0);
    await clock.advanceSettling(1);
    await ending;
    expect(f.log.filter((e) => e.op === "send")).toEqual([{ at: 7000, op: "send", text: "hello" }]);
  });
});
