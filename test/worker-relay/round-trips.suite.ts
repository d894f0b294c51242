/**
 * Issue 12 for relayed platforms: a relayed webhook waits for one call, to its gateway's
 * Relay object (see test/worker/round-trip-trace.ts for how calls are counted).
 */
import { describe, expect, it } from "vitest";
import { tg } from "../support/fixtures.ts";
import { settle } from "../worker/platform-helpers.ts";
import { countOutboundFetch, measure, telegramHook } from "../worker/round-trip-trace.ts";
import { gateway } from "./helpers.ts";

countOutboundFetch();

describe("issue 12, relayed: one round trip before every 2xx", () => {
  it("a relayed message: one call, the Relay object's deliver (which sends it to the gateway)", async () => {
    const gw = await gateway();
    const m = await measure(telegramHook(tg.dm("for the gateway", 1001)));
    expect(m.res.status).toBe(200);
    expect({ depth: m.depth, before: m.before }).toEqual({ depth: 1, before: ["RELAY.deliver"] });
    // Frames other files left unacknowledged are replayed first; this one comes after them.
    const frame = await gw.next((f) => f.type === "inbound" && (f.event as { text: string }).text === "for the gateway");
    // Acknowledged (with what came before it), so it leaves the buffer the other relay tests look at.
    for (const f of gw.frames.filter((x) => x.type === "inbound")) gw.send({ type: "inbound_ack", bufferId: f.bufferId });
    expect(frame.bufferId).toBeTruthy();
    gw.ws.close(1000);
    await gw.closed;
  });

  it("a relayed /stop: one call; telling the chat that the gateway is offline is not waited for", async () => {
    const m = await measure(telegramHook(tg.command("stop", "", 1002)));
    expect(m.res.status).toBe(200);
    expect({ depth: m.depth, before: m.before }).toEqual({ depth: 1, before: ["RELAY.interruptInbound"] });
    await settle();
  });
});
