import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { adapterFor } from "../../workers/platforms/registry.ts";
import { buildSessionKey } from "../../workers/platforms/session-key.ts";
import { wa } from "../support/whatsapp-fixtures.ts";

/**
 * WhatsApp's part of the session-key contract (SPEC section 2): DMs only (no groups served,
 * no threads), so the DM rules. The other adapters run the shared adapter contract.
 */
describe("session keys: whatsapp", () => {
  const parseDm = (from: string) => {
    const adapter = adapterFor(env, "whatsapp")!;
    const ingest = adapter.ingest(JSON.stringify(wa.dm(from, "hi")), new Headers({ "content-type": "application/json" }));
    if (ingest.kind !== "batch" || !ingest.events[0]) throw new Error(`whatsapp: expected a batch with an event, got ${ingest.kind}`);
    return { adapter, message: ingest.events[0] };
  };

  it("keys a DM on the user as Hermes does (agent:main:whatsapp:dm:<wa_id>), one session per user", () => {
    expect(buildSessionKey(parseDm("15550001001").message.source)).toBe("agent:main:whatsapp:dm:15550001001");
    expect(buildSessionKey(parseDm("15550001002").message.source)).toBe("agent:main:whatsapp:dm:15550001002");
  });

  it("derives a DM's source for outbound use (a handoff) exactly as its messages parse", async () => {
    const { adapter, message } = parseDm("15550001001");
    const where = adapter.describeTarget(message.target);
    const derived = await adapter.destination(where.chatId, where.threadId);
    expect(buildSessionKey({ ...derived.source, userId: "someone-else" })).toBe(buildSessionKey(message.source));
  });
});
