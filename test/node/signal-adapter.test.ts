import { describe, expect, it } from "vitest";
import { buildSessionKey } from "../../workers/platforms/session-key.ts";
import { SignalAdapter } from "../../workers/platforms/signal/index.ts";
import type { PlatformEvent } from "../../workers/platforms/types.ts";
import { FakeSignalBridge, SIGNAL_TEST, sig } from "../support/signal-fixtures.ts";

const { alice } = SIGNAL_TEST;

function make(opts: { now?: () => number; sleep?: (ms: number) => Promise<void> } = {}) {
  const bridge = new FakeSignalBridge();
  return { bridge, adapter: new SignalAdapter({ bridge, ...opts }) };
}

function eventOf(adapter: SignalAdapter, received: unknown): PlatformEvent {
  const ingest = adapter.ingest(sig.bridged(received));
  if (ingest.kind !== "event") throw new Error(`no event: ${ingest.kind}`);
  return ingest.event;
}

/** The text a `start:length:STYLE` range covers (UTF-16 units, as Signal counts). */
const styled = (message: string, styles: string[]) =>
  styles.map((st) => {
    const [start, length, style] = st.split(":");
    return `${style}:${message.slice(Number(start), Number(start) + Number(length))}`;
  });

describe("Signal replies", () => {
  it("renders Markdown as text styles whose UTF-16 ranges land on the right words after emoji and other scripts", async () => {
    const { adapter, bridge } = make();
    const target = eventOf(adapter, sig.dm(alice.uuid, "hi")).target;
    await adapter.show(target, "👋🏽 **Grüße** and _日本語_ with `code` and ~~old~~ — see [docs](https://example.com/d)", [], "final");
    const params = bridge.actions.at(-1)!.call.params as { message: string; textStyle: string[] };
    expect(params.message).toBe("👋🏽 Grüße and 日本語 with code and old — see docs (https://example.com/d)");
    expect(styled(params.message, params.textStyle)).toEqual(["BOLD:Grüße", "ITALIC:日本語", "MONOSPACE:code", "STRIKETHROUGH:old"]);
  });

  it("edits the messages a reply already shows by their refs, and posts further parts, each within 2,000 UTF-16 units", async () => {
    const { adapter, bridge } = make();
    const target = eventOf(adapter, sig.dm(alice.uuid, "hi")).target;
    const live = await adapter.show(target, "First words", [], "live");
    expect(bridge.actions).toEqual([{ call: expect.objectContaining({ method: "send" }), ref: live.ids[0], live: true }]);
    const long = `First words, then more. ${"A sentence that goes on for a while. ".repeat(80)}`;
    const final = await adapter.show(target, long, live.ids, "final");
    const [edit, ...rest] = bridge.actions.slice(1);
    expect(edit).toMatchObject({ editOf: live.ids[0], live: false });
    expect(rest.length).toBe(final.ids.length - 1);
    for (const a of bridge.actions.slice(1)) expect(String(a.call.params.message).length).toBeLessThanOrEqual(2000);
  });

  it("marks the answered message read once, and shows typing at most every 10 s", async () => {
    let now = 1_000_000;
    const { adapter, bridge } = make({ now: () => now });
    const target = eventOf(adapter, sig.dm(alice.uuid, "typing please")).target;
    await adapter.typing(target);
    now += 5_000;
    await adapter.typing(target);
    now += 6_000;
    await adapter.typing(target);
    expect(bridge.actions.map((a) => a.call.method)).toEqual(["sendReceipt", "sendTyping", "sendTyping"]);
    expect(bridge.actions[1]).toMatchObject({ transient: true });
  });
});

describe("Signal handoffs", () => {
  it("keys a home given as a number like that person's messages once the gateway has seen their UUID", async () => {
    const { adapter, bridge } = make();
    const real = eventOf(adapter, sig.dm(alice.uuid, "hi"));
    expect((await adapter.destination(alice.number, null)).source.chatId).toBe(alice.number);
    bridge.directory.set(alice.number, alice.uuid);
    const made = await adapter.destination(alice.number, null);
    expect(buildSessionKey({ ...made.source, userId: "cli" })).toBe(buildSessionKey(real.source));
    const group = await adapter.destination(`group:${SIGNAL_TEST.group}`, null);
    expect(group.source).toMatchObject({ chatType: "group", chatId: SIGNAL_TEST.group });
  });

  it("waits for the bridging gateway, then fails with the reason after 60 s; goes at once when it is connected", async () => {
    let now = 0;
    const slept: number[] = [];
    const { adapter, bridge } = make({ now: () => now, sleep: async (ms) => void (slept.push(ms), (now += ms)) });
    bridge.state_ = { ...bridge.state_, connected: false };
    const refused = await adapter.handoffGate();
    expect(refused).toEqual({ ok: false, reason: expect.stringContaining("the gateway that bridges Signal (home) was not connected for 60 s") });
    expect(slept.reduce((a, b) => a + b, 0)).toBe(60_000);
    let polls = 0;
    const back = make({
      now: () => now,
      sleep: async (ms) => void ((now += ms), ++polls === 3 && (back.bridge.state_ = { ...back.bridge.state_, connected: true })),
    });
    back.bridge.state_ = { ...back.bridge.state_, connected: false };
    expect(await back.adapter.handoffGate()).toEqual({ ok: true });
    expect(polls).toBe(3);
  });
});
