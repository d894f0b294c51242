import { env } from "../worker/config.ts";
import { describe, expect, it } from "vitest";
import { loadCorpus, type CorpusEntry } from "../support/corpus.ts";
import { SIGNAL_TEST, sig } from "../support/signal-fixtures.ts";
import { settle } from "../worker/platform-helpers.ts";
import { llm } from "../worker/setup.ts";
import { connect, token, type TestSocket } from "./helpers.ts";

/**
 * The Signal corpus, replayed as the edge takes it: each item sent up by gateway gw3
 * (BRIDGE_PLATFORMS=signal:gw3) as `bridge_inbound`, through the Relay object, the intake,
 * the Inbox and the session, and what the edge sends back run as signal-cli would. Each entry
 * gets what it expects, and the same item again changes nothing.
 */
const GW3 = { id: "gw3", secret: "signal-secret" };
let clock = 1_766_000_000_000;
let n = 0;

/** The entry's item with a fresh timestamp, and (except refusals) the allowed test user as sender. */
function itemOf(entry: CorpusEntry): unknown {
  const item = structuredClone(entry.payload) as Record<string, unknown>;
  const ts = ++clock;
  const params = (item.params ?? item) as Record<string, unknown>;
  const inner = (params.result ?? params) as { envelope?: Record<string, unknown> };
  const e = inner.envelope;
  if (!e) return item;
  e.timestamp = ts;
  for (const k of ["dataMessage", "typingMessage", "receiptMessage"]) if (e[k]) (e[k] as Record<string, unknown>).timestamp = ts;
  if (entry.expect !== "refuse" && !e.syncMessage) Object.assign(e, { source: SIGNAL_TEST.alice.uuid, sourceNumber: null, sourceUuid: SIGNAL_TEST.alice.uuid });
  return item;
}

/** Runs whatever the edge queued for gw3 until nothing waits; the calls, in order. */
async function drain(s: TestSocket): Promise<Array<{ method: string; params: Record<string, unknown> }>> {
  const relay = env.RELAY.getByName(GW3.id);
  const calls: Array<{ method: string; params: Record<string, unknown> }> = [];
  while ((await relay.bridgeState("signal")).waiting > 0) {
    const f = await s.next("bridge_action");
    calls.push(f.call as (typeof calls)[number]);
    s.send({ type: "bridge_result", actionId: f.actionId, result: { success: true, timestamp: ++clock } });
    s.send({ type: "ping" });
    await s.next("pong");
  }
  return calls;
}

async function up(s: TestSocket, item: unknown): Promise<void> {
  const id = `corpus-${++n}`;
  s.send({ type: "bridge_inbound", platform: "signal", id, body: sig.bridged(item) });
  await s.next((f) => f.type === "bridge_inbound_ack" && f.id === id);
  await settle();
}

describe("the Signal corpus, through the Relay object", () => {
  it.each(
    loadCorpus()
      .filter((e) => e.platform === "signal")
      .map((e) => [`${e.name} (${e.expect})`, e] as const),
  )("%s", async (_, entry) => {
    const s = await connect(await token(GW3));
    s.send({ type: "hello", platform: "signal", botId: "" });
    await s.next("descriptor");
    await drain(s);
    const turns = llm.calls.length;
    const item = itemOf(entry);
    await up(s, item);
    const said = (await drain(s)).filter((c) => c.method === "send").map((c) => String(c.params.message));
    const ran = llm.calls.length - turns;
    if (entry.expect === "reply") {
      expect(ran).toBe(1);
      expect(
        said.some((t) => t.startsWith("echo:")),
        said.join(" | "),
      ).toBe(true);
    } else {
      expect(ran).toBe(0);
      if (entry.expect === "silence") expect(said).toEqual([]);
      if (entry.expect === "answer") expect(said.length).toBeGreaterThan(0);
      if (entry.expect === "refuse")
        expect(
          said.some((t) => t.includes("SIGNAL_ALLOWED_USERS")),
          said.join(" | "),
        ).toBe(true);
    }
    // Delivered again (the gateway resent it): nothing more happens.
    await up(s, item);
    expect(await drain(s)).toEqual([]);
    expect(llm.calls.length).toBe(turns + ran);
    s.ws.close(1000);
    await s.closed;
  });
});
