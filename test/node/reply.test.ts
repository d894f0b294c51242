import { describe, expect, it } from "vitest";
import type { TurnOutcome } from "../../workers/agent/index.ts";
import { showParts } from "../../workers/platforms/parts.ts";
import { ReplyStreamer, STOPPED_TEXT } from "../../workers/runtime/index.ts";
import { ManualClock } from "../support/manual-clock.ts";
import { FakeChannel, rateLimited, unavailable } from "../support/runtime-fakes.ts";

const done = (finishReason: TurnOutcome["finishReason"] = "stop"): TurnOutcome => ({ finishReason, text: "", usage: { input: 0, output: 0 }, toolCalls: 0 });

/** A streamer over a fake channel with a manual clock; `at` records when each show happened. */
function rig(interval: number) {
  const clock = new ManualClock(0);
  const channel = new FakeChannel({ editIntervalMs: interval });
  const at: number[] = [];
  const show = channel.show.bind(channel);
  channel.show = async (...args) => {
    at.push(clock.now());
    return show(...args);
  };
  const logs: string[] = [];
  const reply = new ReplyStreamer(channel, { clock, log: (l) => logs.push(l) });
  return { clock, channel, reply, at, logs };
}

describe("streamed replies (the runtime's ReplyStreamer)", () => {
  it("shows the first text at once, then edits no more often than the channel's interval (1.1 s in a Telegram DM)", async () => {
    const { clock, channel, reply, at } = rig(1100);
    reply.start();
    reply.event({ type: "text", text: "a" });
    await clock.advanceSettling(0);
    for (let i = 0; i < 10; i++) {
      reply.event({ type: "text", text: "b" });
      await clock.advanceSettling(200);
    }
    const end = await reply.end(done());
    expect(channel.shows("live")[0]).toMatchObject({ text: "a", ids: [] });
    expect(at[0]).toBe(0);
    for (let i = 1; i < at.length; i++) expect(at[i]! - at[i - 1]!).toBeGreaterThanOrEqual(1100);
    // Later shows edit the first message.
    expect(
      channel
        .shows("live")
        .slice(1)
        .every((c) => c.ids?.[0] === "100"),
    ).toBe(true);
    expect(end).toMatchObject({ text: "abbbbbbbbbb", ids: ["100"] });
  });

  it("waits 3.1 s between edits in a group", async () => {
    const { clock, channel, reply, at } = rig(3100);
    reply.event({ type: "text", text: "x" });
    await clock.advanceSettling(0);
    reply.event({ type: "text", text: "y" });
    await clock.advanceSettling(3000);
    expect(channel.shows("live")).toHaveLength(1);
    await clock.advanceSettling(200);
    expect(channel.shows("live").map((c) => c.text)).toEqual(["x", "xy"]);
    expect(at).toEqual([0, 3100]);
  });

  it("refreshes typing while the turn runs, stops when it ends, and ends a silent interrupted turn with the stopped text", async () => {
    const { clock, channel, reply } = rig(1100);
    reply.start();
    await clock.advanceSettling(9000);
    const end = await reply.end(done("interrupted"));
    await clock.advanceSettling(20_000);
    expect(channel.calls.filter((c) => c.op === "typing")).toHaveLength(3);
    expect(end.text).toBe(STOPPED_TEXT);
  });

  it("honours a 429 retry_after before the next live update, and hands it on to the final delivery", async () => {
    const { clock, channel, reply, at } = rig(1100);
    channel.failures.push(rateLimited(7));
    reply.event({ type: "text", text: "hello" });
    await clock.advanceSettling(0);
    reply.event({ type: "text", text: " world" });
    await clock.advanceSettling(6999);
    expect(at).toEqual([0]);
    await clock.advanceSettling(1);
    expect(at).toEqual([0, 7000]);
    const end = await reply.end(done());
    expect(end.notBefore).toBe(7000);
  });

  it("backs off live updates while the platform fails with 5xx, instead of retrying per token", async () => {
    const { clock, channel, reply, logs } = rig(1000);
    channel.failAlways = unavailable();
    for (let i = 0; i < 40; i++) {
      reply.event({ type: "text", text: "t " });
      await clock.advanceSettling(50);
    }
    // Two seconds of streaming: the first try, then backoff 2 s → at most two attempts.
    expect(channel.shows("live").length).toBeLessThanOrEqual(2);
    expect(logs.filter((l) => l.includes("live update failed"))).toHaveLength(1);
    await reply.end(done());
  });
});

describe("showing rendered parts", () => {
  it("edits the messages it has, posts the parts beyond them, and shows only the first part while live", async () => {
    const calls: string[] = [];
    const io = {
      send: async (p: { text: string }, i: number) => (calls.push(`send ${i} ${p.text}`), `n${i}`),
      edit: async (id: string, p: { text: string }) => void calls.push(`edit ${id} ${p.text}`),
    };
    const parts = [{ text: "one" }, { text: "two" }, { text: "three" }];
    expect(await showParts(io, parts, [], "live")).toEqual({ ids: ["n0"], complete: false });
    expect(await showParts(io, parts, ["n0"], "final")).toEqual({ ids: ["n0", "n1", "n2"], complete: true });
    expect(calls).toEqual(["send 0 one", "edit n0 one", "send 1 two", "send 2 three"]);
  });

  it("a channel that cannot edit (WhatsApp) gets the completed paragraphs as they come, outside code blocks, never a tool line", async () => {
    const clock = new ManualClock(0);
    const channel = new FakeChannel({ edits: false, editIntervalMs: 2500 });
    const reply = new ReplyStreamer(channel, { clock, log: () => {} });
    reply.start();
    for (const chunk of ["First para", "graph.\n", "\nSecond ", "one.\n\n```\ncode\n\nstill code", "\n```\n\nThird"]) {
      reply.event({ type: "text", text: chunk });
      await clock.advanceSettling(1000);
    }
    reply.event({ type: "tool", phase: "start", id: "t1", name: "fetch_url", summary: "x" } as never);
    await clock.advanceSettling(5000);
    const end = await reply.end(done());
    // Posted at once, then no sooner than 2.5 s later; the code block's blank line is no cut.
    expect(channel.shows("live").map((c) => c.text)).toEqual(["First paragraph.", "First paragraph.\n\nSecond one.\n\n```\ncode\n\nstill code\n```"]);
    expect(end).toMatchObject({ text: "First paragraph.\n\nSecond one.\n\n```\ncode\n\nstill code\n```\n\nThird", shown: false });
  });
});
