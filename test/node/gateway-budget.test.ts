import { afterEach, describe, expect, it } from "vitest";
import { GatewayStore } from "../../cli/gateway/index.ts";
import { UsageStore } from "../../workers/runtime/index.ts";
import { FakeConnector, inboundEvent, type SentFrame } from "../support/fake-connector.ts";
import { loopbackLlm, startGateway, tempDb } from "../support/gateway-harness.ts";
import { lastUserText } from "../support/fake-llm.ts";
import { ManualClock } from "../support/manual-clock.ts";

/**
 * DAILY_TOKEN_BUDGET on a relayed platform: the Worker sends it in the descriptor and the
 * gateway, which runs (and counts) those turns, keeps it as the edge does for its own.
 */
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

const isAck = (bufferId: string) => (f: SentFrame) => f.type === "inbound_ack" && f.bufferId === bufferId;
const sendsTo = (chat: string) => (f: SentFrame) =>
  f.type === "outbound" && (f.action as { op: string; chat_id: string }).op === "send" && (f.action as { chat_id: string }).chat_id === chat;
const isFinal = (chat: string) => (f: SentFrame) =>
  f.type === "outbound" && (f.action as { final?: boolean; chat_id: string }).final === true && (f.action as { chat_id: string }).chat_id === chat;
const content = (f: SentFrame) => (f.action as { content: string }).content;

describe("DAILY_TOKEN_BUDGET through the relay", () => {
  it("a user over today's tokens gets no turn and one notice a day; another user is answered; the next UTC day it resets", async () => {
    const l = await loopbackLlm();
    cleanups.push(l.close);
    const clock = new ManualClock(Date.UTC(2026, 11, 2, 22, 30));
    const dbPath = tempDb();
    // Earlier today this user's turns on this gateway used 1,100 tokens.
    const seed = GatewayStore.open(dbPath);
    new UsageStore(seed.sql, "agent:main:telegram:dm:42#0").record("earlier-turn", "telegram:u1", { input: 900, output: 200 }, clock.now());
    seed.close();

    const connector = new FakeConnector();
    const gw = startGateway({ connector, clock, dbPath, llmUrl: l.url });
    const s = await connector.socket(1);
    await s.handshake(["telegram"], { daily_token_budget: 1000 });

    s.frame({ type: "inbound", event: inboundEvent("42", "1", "one more question"), bufferId: "b1" });
    await s.waitFor(isAck("b1"));
    const notice = await s.waitFor(sendsTo("42"));
    expect(content(notice)).toBe(
      "You have used today's allowance of 1,000 tokens (1,100 so far), so this message was not answered. It resets at 00:00 UTC, in 1 h 30 min.",
    );

    s.frame({ type: "inbound", event: inboundEvent("42", "2", "and another"), bufferId: "b2" });
    await s.waitFor(isAck("b2"));
    // A second user in their own chat is under the budget: answered.
    const other = inboundEvent("43", "3", "hello from Bea");
    s.frame({ type: "inbound", event: { ...other, source: { ...other.source, user_id: "u2", user_name: "Bea" } }, bufferId: "b3" });
    expect(content(await s.waitFor(isFinal("43")))).toBe("echo: hello from Bea");
    expect(l.llm.calls.map((c) => lastUserText(c.body))).toEqual(["hello from Bea"]);
    expect(s.sent.filter(sendsTo("42"))).toHaveLength(1);

    // Past 00:00 UTC the allowance is new: the same user is answered again.
    clock.advance(2 * 60 * 60 * 1000);
    s.frame({ type: "inbound", event: inboundEvent("42", "4", "good morning"), bufferId: "b4" });
    expect(content(await s.waitFor(isFinal("42"), 2))).toBe("echo: good morning");
    expect(l.llm.calls).toHaveLength(2);

    gw.signals.emit("SIGTERM");
    await s.waitFor((f) => f.type === "going_idle");
    s.frame({ type: "going_idle_ack" });
    expect(await gw.exit).toBe(0);
  });
});
