import { describe, expect, it } from "vitest";
import type { TurnOutcome } from "../../workers/agent/index.ts";
import { replyKey } from "../../workers/runtime/channel.ts";
import { ReplyStreamer } from "../../workers/runtime/index.ts";
import type { OutboundActionIn } from "../../workers/relay/frames.ts";
import { relayChannel } from "../../cli/gateway/channel.ts";
import type { Outbox } from "../../cli/gateway/outbox.ts";
import { ManualClock } from "../support/manual-clock.ts";
import { FakeChannel } from "../support/runtime-fakes.ts";

const done: TurnOutcome = { finishReason: "stop", text: "", usage: { input: 0, output: 0 }, toolCalls: 0 };

/** An outbox that answers every request with message 7 and keeps the actions. */
function keepingOutbox() {
  const actions: OutboundActionIn[] = [];
  const outbox = {
    request: async (_platform: string, action: OutboundActionIn) => {
      actions.push(action);
      return { success: true, message_id: "7", message_ids: ["7"], complete: true };
    },
    notify: () => {},
  } as unknown as Outbox;
  return { outbox, actions };
}

describe("a reply's idempotency key", () => {
  it("goes with the first post of a relayed reply only: not with edits, typing or separate posts", async () => {
    const { outbox, actions } = keepingOutbox();
    const channel = relayChannel(outbox, { platform: "telegram", chatId: "1001", threadId: null, target: null, private: true }, undefined);
    await channel.show("first words", [], "live", replyKey("t1"));
    await channel.show("first words and more", ["7"], "final", replyKey("t1"));
    await channel.show("no key given", [], "final");
    await channel.post("a note");
    expect(actions.map((a) => [a.op, a.idempotency_key])).toEqual([
      ["send", "reply:t1"],
      ["edit", undefined],
      ["send", undefined],
      ["send", undefined],
    ]);
  });

  it("is the streamer's on every showing, so a live post and the final delivery of one turn carry the same key", async () => {
    const clock = new ManualClock(0);
    const channel = new FakeChannel({ editIntervalMs: 1000 });
    const reply = new ReplyStreamer(channel, { clock, key: replyKey("t2"), log: () => {} });
    reply.event({ type: "text", text: "a" });
    await clock.advanceSettling(0);
    reply.event({ type: "text", text: "b" });
    await clock.advanceSettling(1000);
    await reply.end(done);
    const keys = channel.shows().map((c) => c.key);
    expect(keys.length).toBeGreaterThanOrEqual(2);
    expect(new Set(keys)).toEqual(new Set(["reply:t2"]));
  });
});
