import { afterEach, describe, expect, it } from "vitest";
import { NEW_SESSION_TEXT } from "../../cli/gateway/index.ts";
import { measure, splitText } from "../../workers/platforms/text.ts";
import { FakeConnector, inboundEvent, type FakeSocket, type SentFrame } from "../support/fake-connector.ts";
import { loopbackLlm, startGateway, tempDb, type GatewayRun } from "../support/gateway-harness.ts";
import { ManualClock } from "../support/manual-clock.ts";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

async function llm() {
  const l = await loopbackLlm();
  cleanups.push(l.close);
  return l;
}

const isAck = (bufferId: string) => (f: SentFrame) => f.type === "inbound_ack" && f.bufferId === bufferId;
const isOp = (op: string, chat?: string) => (f: SentFrame) => {
  const a = f.action as { op: string; chat_id: string } | undefined;
  return f.type === "outbound" && a?.op === op && (chat === undefined || a.chat_id === chat);
};
const content = (f: SentFrame) => (f.action as { content: string }).content;

async function stop(gw: GatewayRun, s: FakeSocket): Promise<number> {
  gw.signals.emit("SIGTERM");
  await s.waitFor((f) => f.type === "going_idle");
  s.frame({ type: "going_idle_ack" });
  return gw.exit;
}

describe("gateway inbound handling", () => {
  it("shows typing while the turn runs and acks only after the reply's outbound_result", async () => {
    const { llm: model, url, served } = await llm();
    const gate = model.hold(["Hello "], ["there"]);
    const clock = new ManualClock();
    const connector = new FakeConnector();
    const gw = startGateway({ connector, clock, llmUrl: url });
    const s = await connector.socket(1);
    await s.handshake();
    s.autoResult = false;
    const ev = inboundEvent("42", "7", "hi");
    s.frame({ type: "inbound", event: ev, bufferId: "b1" });
    await s.waitFor(isOp("typing", "42"));
    await served(1);
    clock.advance(4_000);
    await s.waitFor(isOp("typing", "42"), 2);
    s.frame({ type: "inbound", event: ev, bufferId: "b1-again" }); // a replay while it runs
    gate.release();
    const send = await s.waitFor(isOp("send", "42"));
    expect(send).toMatchObject({ platform: "telegram", action: { op: "send", chat_id: "42", content: "Hello there", thread_id: null } });
    expect(s.sent.filter((f) => f.type === "inbound_ack")).toEqual([]);
    s.result(send.requestId as string, { success: true, message_id: "900" });
    await s.waitFor(isAck("b1-again"));
    const acks = s.sent.filter((f) => f.type === "inbound_ack").map((f) => f.bufferId);
    expect(acks).toEqual(["b1", "b1-again"]);
    expect(s.sent.indexOf(send)).toBeLessThan(s.sent.findIndex(isAck("b1")));
    expect(model.calls).toHaveLength(1);
    const typing = s.sent.filter(isOp("typing")).length;
    clock.advance(20_000);
    expect(s.sent.filter(isOp("typing"))).toHaveLength(typing);
    expect(gw.stderr()).toMatch(/telegram chat 42: 2 chars in, 11 chars out\n/);
    expect(await stop(gw, s)).toBe(0);
  });

  it("splits a reply to the descriptor's max_message_length in its len_unit", async () => {
    const { llm: model, url } = await llm();
    const text = `${"😀".repeat(30)} ${"word ".repeat(12)}end`;
    model.text(text);
    const clock = new ManualClock();
    const connector = new FakeConnector();
    const gw = startGateway({ connector, clock, llmUrl: url });
    const s = await connector.socket(1);
    await s.handshake(["telegram"], { max_message_length: 40, len_unit: "chars" });
    s.frame({ type: "inbound", event: inboundEvent("1", "1", "long please"), bufferId: "b1" });
    await s.waitFor(isAck("b1"));
    const pieces = s.sends();
    expect(pieces).toEqual(splitText(text, 40, "codepoints"));
    expect(pieces.length).toBeGreaterThan(1);
    expect(pieces.every((p) => measure(p, "codepoints") <= 40)).toBe(true);
    expect(measure(pieces[0]!, "utf16")).toBeGreaterThan(40); // counted in code points, not UTF-16
    expect(await stop(gw, s)).toBe(0);
  });

  it("acks but does not rerun a replay, after a reconnect and after a restart on the same database", async () => {
    const { llm: model, url } = await llm();
    const dbPath = tempDb();
    const ev = inboundEvent("5", "77", "remember me");
    const clock = new ManualClock();
    const first = new FakeConnector();
    const gw = startGateway({ connector: first, clock, llmUrl: url, dbPath });
    const s1 = await first.socket(1);
    await s1.handshake();
    s1.frame({ type: "inbound", event: ev, bufferId: "b1" });
    await s1.waitFor(isAck("b1"));
    s1.closeFromServer(1006);
    clock.advance(clock.pending()[0]!);
    const s2 = await first.socket(2);
    await s2.handshake();
    s2.frame({ type: "inbound", event: ev, bufferId: "b2" });
    await s2.waitFor(isAck("b2"));
    expect(s2.sends()).toEqual([]);
    expect(await stop(gw, s2)).toBe(0);
    expect(s2.closedByGateway?.code).toBe(1000);

    const again = new FakeConnector();
    const gw2 = startGateway({ connector: again, clock, llmUrl: url, dbPath });
    const s3 = await again.socket(1);
    await s3.handshake();
    s3.frame({ type: "inbound", event: ev, bufferId: "b3" }, { type: "inbound", event: inboundEvent("5", "78", "and now?"), bufferId: "b4" });
    await s3.waitFor(isAck("b4"));
    expect(s3.sent.filter((f) => f.type === "inbound_ack").map((f) => f.bufferId)).toEqual(["b3", "b4"]);
    expect(s3.sends()).toEqual(["echo: and now?"]);
    expect(model.calls).toHaveLength(2);
    // The local transcript survived the restart too.
    expect(model.calls[1]!.body.messages.map((m) => [m.role, m.content])).toEqual([
      ["user", "remember me"],
      ["assistant", "echo: remember me"],
      ["user", "and now?"],
    ]);
    expect(await stop(gw2, s3)).toBe(0);
  });

  it("interrupt_inbound stops only that session's turn; its queued message still runs", async () => {
    const { llm: model, url, served } = await llm();
    const gateA = model.hold(["partial "], ["never shown"]);
    const gateB = model.hold(["B says "], ["hi"]);
    const clock = new ManualClock();
    const connector = new FakeConnector();
    const gw = startGateway({ connector, clock, llmUrl: url });
    const s = await connector.socket(1);
    await s.handshake();
    const a1 = inboundEvent("a", "1", "first for a");
    s.frame({ type: "inbound", event: a1, bufferId: "a1" });
    await served(1);
    s.frame({ type: "inbound", event: inboundEvent("b", "1", "for b"), bufferId: "b1" });
    await served(2);
    s.frame({ type: "inbound", event: inboundEvent("a", "2", "second for a"), bufferId: "a2" });
    s.frame({ type: "interrupt_inbound", session_key: a1.session_key, chat_id: "a" });
    const stopped = await s.waitFor(isOp("send", "a"));
    expect(content(stopped)).toMatch(/^(partial ?|⏹ Stopped\.)$/);
    expect(content(await s.waitFor(isOp("send", "a"), 2))).toBe("echo: second for a");
    expect(s.sent.filter(isOp("send", "b"))).toEqual([]);
    expect(gateB.cancelled).toBe(false);
    gateB.release();
    expect(content(await s.waitFor(isOp("send", "b")))).toBe("B says hi");
    await s.waitFor(isAck("b1"));
    expect(await stop(gw, s)).toBe(0);
  });

  it("answers /new with a fresh transcript and provider failures with a warning", async () => {
    const { llm: model, url } = await llm();
    const clock = new ManualClock();
    const connector = new FakeConnector();
    const gw = startGateway({ connector, clock, llmUrl: url });
    const s = await connector.socket(1);
    await s.handshake();
    model.text("noted");
    model.then({ kind: "http", status: 401, body: '{"error":{"message":"bad key"}}' });
    s.frame(
      { type: "inbound", event: inboundEvent("9", "1", "keep this"), bufferId: "1" },
      { type: "inbound", event: inboundEvent("9", "2", " /new "), bufferId: "2" },
      { type: "inbound", event: inboundEvent("9", "3", "fresh start"), bufferId: "3" },
      { type: "inbound", event: inboundEvent("9", "4", "once more"), bufferId: "4" },
    );
    await s.waitFor(isAck("4"));
    const sends = s.sends();
    expect(sends.slice(0, 2)).toEqual(["noted", NEW_SESSION_TEXT]);
    expect(sends[2]).toMatch(/^⚠️ the model provider rejected the API key \(HTTP 401\)/);
    // The failed turn left its user message unanswered; the core's repair merges it into the next.
    expect(sends[3]).toBe("echo: fresh start\n\nonce more");
    expect(model.calls[1]!.body.messages.map((m) => m.content)).toEqual(["fresh start"]);
    expect(await stop(gw, s)).toBe(0);
  });

  it("treats a missing outbound_result as an ambiguous failure after 30 s, then acks", async () => {
    const clock = new ManualClock();
    const connector = new FakeConnector();
    const gw = startGateway({ connector, clock });
    const s = await connector.socket(1);
    await s.handshake();
    s.autoResult = false;
    s.frame({ type: "inbound", event: inboundEvent("3", "1", "hello"), bufferId: "b1" });
    await s.waitFor(isOp("send", "3"));
    clock.advance(29_999);
    expect(s.sent.filter((f) => f.type === "inbound_ack")).toEqual([]);
    clock.advance(1);
    await s.waitFor(isAck("b1"));
    expect(gw.stderr()).toContain("outbound send to chat 3: no outbound_result within 30s; it may or may not have run");
    expect(gw.stderr()).toContain("(reply not delivered)");
    expect(await stop(gw, s)).toBe(0);
  });

  it("on SIGTERM interrupts running turns, goes idle, waits at most 2 s for the ack and closes with 1000", async () => {
    const { llm: model, url, served } = await llm();
    model.hold();
    const clock = new ManualClock();
    const connector = new FakeConnector();
    const gw = startGateway({ connector, clock, llmUrl: url });
    const s = await connector.socket(1);
    await s.handshake();
    const ev = inboundEvent("8", "1", "long job");
    s.frame({ type: "inbound", event: ev, bufferId: "run" }, { type: "inbound", event: inboundEvent("8", "2", "waiting"), bufferId: "queued" });
    await served(1);
    gw.signals.emit("SIGTERM");
    expect(await s.waitFor((f) => f.type === "interrupt")).toEqual({ type: "interrupt", session_key: ev.session_key, reason: "gateway stopping" });
    await s.waitFor((f) => f.type === "going_idle");
    await s.waitFor(isAck("run"));
    expect(s.sends()[0]).toMatch(/^(partial ?|⏹ Stopped\.)$/);
    expect(s.closedByGateway).toBeNull();
    clock.advance(2_000);
    expect(await gw.exit).toBe(0);
    expect(s.closedByGateway).toEqual({ code: 1000, reason: "gateway stopping" });
    expect(s.sent.filter((f) => f.type === "inbound_ack").map((f) => f.bufferId)).toEqual(["run"]);
    expect(model.calls).toHaveLength(1);
  });
});
