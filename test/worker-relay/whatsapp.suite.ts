import { env } from "../worker/config.ts";
import { describe, expect, it } from "vitest";
import { wa } from "../support/whatsapp-fixtures.ts";
import { settle, toWhatsApp } from "../worker/platform-helpers.ts";
import { llm, whatsapp } from "../worker/setup.ts";
import { connect, GW, token, type Frame, type TestSocket } from "./helpers.ts";

/** RELAY_PLATFORMS names whatsapp too (vitest.config.ts): its turns run on gateway gw1. */
async function whatsappGateway() {
  const s = await connect(await token());
  s.send({ type: "hello", platform: "whatsapp", botId: "" });
  expect(await s.next("descriptor")).toMatchObject({ descriptor: { platform: "whatsapp", max_message_length: 4096 } });
  return s;
}

/**
 * Acknowledges every inbound frame the socket had (a frame another file left unacknowledged
 * is replayed on any handshake of gw1), waits until the buffer is empty, then closes and waits
 * for the close: a next handshake while this socket still counts as live is refused (4409).
 */
async function finish(s: TestSocket): Promise<void> {
  for (const f of s.frames.filter((x) => x.type === "inbound")) s.send({ type: "inbound_ack", bufferId: f.bufferId });
  const relay = env.RELAY.getByName(GW.id);
  for (let i = 0; i < 100 && (await relay.status()).buffered > 0; i++) await scheduler.wait(0);
  s.ws.close(1000);
  await s.closed;
}

const whatsappInbound = (f: Frame) => f.type === "inbound" && (f.event as { source?: { platform?: string } }).source?.platform === "whatsapp";

describe("RELAY_PLATFORMS=whatsapp", () => {
  it("relays a signed WhatsApp message to the gateway as an inbound frame keyed on the DM, instead of running it at the edge", async () => {
    const s = await whatsappGateway();
    const turns = llm.calls.length;
    expect((await toWhatsApp(wa.dm("15550001001", "for the gateway, from whatsapp"))).status).toBe(200);
    const f = await s.next(whatsappInbound);
    expect(f).toMatchObject({
      bufferId: expect.any(String),
      event: {
        text: "for the gateway, from whatsapp",
        session_key: "agent:main:whatsapp:dm:15550001001",
        source: { platform: "whatsapp", chat_id: "15550001001", chat_type: "dm", user_id: "15550001001" },
      },
    });
    await settle();
    expect(llm.calls.length).toBe(turns);
    expect(whatsapp.sent()).toEqual([]);
    await finish(s);
  });

  it("refuses a forged WhatsApp delivery before anything reaches the gateway", async () => {
    const s = await whatsappGateway();
    const res = await toWhatsApp(wa.dm("15550001001", "forged"), { "content-type": "application/json", "x-hub-signature-256": `sha256=${"0".repeat(64)}` });
    expect(res.status).toBe(401);
    // A ping answered proves the socket is live and nothing came before the pong.
    s.send({ type: "ping" });
    await s.next("pong");
    expect(s.frames.filter(whatsappInbound)).toEqual([]);
    await finish(s);
  });

  it("runs a gateway's outbound send through the WhatsApp adapter: posted to the Graph API", async () => {
    const s = await whatsappGateway();
    s.send({ type: "outbound", requestId: "wa1", platform: "whatsapp", action: { op: "send", chat_id: "15550001002", content: "**hi** from the gateway" } });
    expect(await s.next("outbound_result")).toMatchObject({ requestId: "wa1", result: { success: true, message_id: expect.any(String) } });
    expect(whatsapp.texts("15550001002")).toEqual(["*hi* from the gateway"]);
    expect(whatsapp.sent().at(-1)!.path).toMatch(/\/v23\.0\/106540352242922\/messages$/);
    await finish(s);
  });
});
