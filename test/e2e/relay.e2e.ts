import { DatabaseSync } from "node:sqlite";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { watchGateway } from "../support/gateway-hooks.ts";
import { tempDir } from "../support/temp.ts";
import { RELAY_E2E, relayHarness, startGateway, type Harness } from "../support/e2e.ts";
import type { ApiCall } from "../support/fake-platforms.ts";
import { conversation, imagesOf, lastUserText } from "../support/fake-llm.ts";
import { dataUrl, PNG } from "../support/files.ts";
import { tg } from "../support/fixtures.ts";
import { telegramHeaders, whatsappHeaders } from "../support/signing.ts";
import { wa } from "../support/whatsapp-fixtures.ts";

/**
 * The e2e Worker relaying Telegram and WhatsApp, the real `hermes-edge gateway` process
 * dialing out to it, loopback fakes of Telegram, the Graph API and the model: messages reach
 * the gateway and its replies reach the platform, /stop interrupts, and nothing sent while it
 * is down is lost.
 */
let h: Harness & { llmUrl: string; stop(): Promise<void> };
let dir: string;

beforeAll(async () => {
  h = await relayHarness();
  h.reset();
  dir = tempDir("hermes-gw-e2e-");
});

function gateway(extra: Record<string, string> = {}, db = "gw.db") {
  const gw = startGateway(["--platforms", "telegram,whatsapp", "--db", path.join(dir, db)], {
    ...extra,
    GATEWAY_RELAY_URL: h.worker.url,
    GATEWAY_RELAY_ID: RELAY_E2E.gatewayId,
    GATEWAY_RELAY_SECRET: RELAY_E2E.secret,
    LLM_BASE_URL: `${h.llmUrl}/v1`,
  });
  return watchGateway(gw, `gateway on ${db}`);
}

const webhook = (update: unknown) => fetch(`${h.worker.url}/webhooks/telegram`, { method: "POST", headers: telegramHeaders(), body: JSON.stringify(update) });
const waDm = async (from: string, text: string) => {
  const body = JSON.stringify(wa.dm(from, text));
  return fetch(`${h.worker.url}/webhooks/whatsapp`, { method: "POST", headers: await whatsappHeaders(body), body });
};
const sent = (chat: number, text: string) => (c: ApiCall) => c.path.endsWith("/sendMessage") && Number(c.body.chat_id) === chat && String(c.body.text) === text;

describe("relay end to end", () => {
  it("serves Telegram through the gateway's own socket, stops on /stop, and loses nothing across a disconnect", async () => {
    const gw = gateway();
    await gw.waitFor("relay: connected");

    await webhook(tg.dm("hello gateway", 1001));
    await h.telegram.waitFor(sent(1001, "echo: hello gateway"));
    expect(conversation(h.llm.calls.at(-1)!.body).map((m) => m.content)).toEqual(["hello gateway"]);

    h.llm.hold(["thinking "], ["never"]);
    await webhook(tg.dm("a long one", 1002));
    await h.telegram.waitFor((c) => c.path.endsWith("/sendChatAction") && Number(c.body.chat_id) === 1002);
    const stop = tg.command("stop", "", 1002);
    await webhook(stop);
    await h.telegram.waitFor(
      (c) =>
        c.path.endsWith("/sendMessage") &&
        Number(c.body.chat_id) === 1002 &&
        /Stopped|thinking/.test(String(c.body.text)) &&
        String(c.body.text) !== "Stopping…",
    );

    gw.child.kill("SIGKILL");
    await gw.exit;
    for (const t of ["while away 1", "while away 2", "while away 3"]) expect((await webhook(tg.dm(t, 1001))).status).toBe(200);
    const again = gateway();
    await again.waitFor("relay: connected");
    for (const t of ["while away 1", "while away 2", "while away 3"]) await h.telegram.waitFor(sent(1001, `echo: ${t}`));
    const replies = h.telegram.calls.filter((c) => c.path.endsWith("/sendMessage") && Number(c.body.chat_id) === 1001).map((c) => String(c.body.text));
    expect(replies.filter((t) => t.startsWith("echo: while away"))).toEqual(["echo: while away 1", "echo: while away 2", "echo: while away 3"]);
    expect(replies.filter((t) => t === "echo: hello gateway")).toHaveLength(1);

    again.child.kill("SIGTERM");
    expect(await again.exit).toBe(0);
  });

  it("streams a relayed reply by edits of one message, and honours BUSY_POLICY=interrupt on the gateway", async () => {
    const gw = gateway({ BUSY_POLICY: "interrupt" }, "gw-busy.db");
    await gw.waitFor("relay: connected");

    // Streamed: the first words are shown while the model is held, the rest arrive as an edit of that message.
    const gate = h.llm.hold(["first words, "], ["then the rest"]);
    await webhook(tg.dm("stream to me", 1004));
    const preview = await h.telegram.waitFor(
      (c) => c.path.endsWith("/sendMessage") && Number(c.body.chat_id) === 1004 && String(c.body.text).startsWith("first words"),
    );
    gate.release();
    const final = await h.telegram.waitFor(
      (c) => c.path.endsWith("/editMessageText") && Number(c.body.chat_id) === 1004 && String(c.body.text) === "first words, then the rest",
    );
    const previewId = (preview.answer as { result: { message_id: number } }).result.message_id;
    expect(final.body.message_id).toBe(previewId);
    expect(h.telegram.calls.filter((c) => c.path.endsWith("/sendMessage") && Number(c.body.chat_id) === 1004)).toHaveLength(1);

    // BUSY_POLICY=interrupt: a message sent while a turn runs stops it and is answered next.
    const held = h.llm.hold(["cut short "], ["never"]);
    await webhook(tg.dm("a question", 1004));
    await h.telegram.waitFor((c) => c.path.endsWith("/sendMessage") && Number(c.body.chat_id) === 1004 && String(c.body.text).startsWith("cut short"));
    await webhook(tg.dm("no, this one", 1004));
    await h.telegram.waitFor(
      (c) => /\/(sendMessage|editMessageText)$/.test(c.path) && Number(c.body.chat_id) === 1004 && String(c.body.text) === "echo: no, this one",
    );
    expect(held.cancelled).toBe(true);
    expect(conversation(h.llm.calls.at(-1)!.body).map((m) => m.content)).toEqual([
      "stream to me",
      "first words, then the rest",
      "a question",
      "cut short ",
      "no, this one",
    ]);

    gw.child.kill("SIGTERM");
    expect(await gw.exit).toBe(0);
  });

  it("a photo sent to a relayed chat reaches the gateway's model through the connector's signed link", async () => {
    h.telegram.serveFile("relay-e2e-photo", PNG, "application/octet-stream", "photos/relay-e2e.jpg");
    const gw = gateway();
    await gw.waitFor("relay: connected");
    const photo = tg.dm("", 1002, {
      caption: "what is this?",
      photo: [{ file_id: "relay-e2e-photo", file_unique_id: "p", width: 1, height: 1, file_size: PNG.byteLength }],
    });
    delete (photo.message as Record<string, unknown>).text;
    await webhook(photo);
    await h.telegram.waitFor(
      (c) => c.path.endsWith("/sendMessage") && Number(c.body.chat_id) === 1002 && String(c.body.text).startsWith("echo: what is this?"),
    );
    const call = h.llm.calls.find((c) => lastUserText(c.body).startsWith("what is this?"))!;
    expect(imagesOf(call.body.messages.at(-1)!.content)).toEqual([dataUrl("image/png", PNG)]);
    gw.child.kill("SIGTERM");
    expect(await gw.exit).toBe(0);
  });

  it("a signed WhatsApp DM is answered by the gateway's model, posted through the Graph API to that user, in the session agent:main:whatsapp:dm:<wa_id>", async () => {
    const user = "15550002002";
    const gw = gateway({}, "gw-wa.db");
    await gw.waitFor("relay: connected");
    const turns = h.llm.calls.length;
    expect((await waDm(user, "hello gateway from whatsapp")).status).toBe(200);
    await h.whatsapp.waitFor(
      (c) => c.body.to === user && c.body.type === "text" && (c.body.text as { body: string }).body === "echo: hello gateway from whatsapp",
    );
    expect(h.llm.calls.length).toBe(turns + 1);
    expect(conversation(h.llm.calls.at(-1)!.body).map((m) => m.content)).toEqual(["hello gateway from whatsapp"]);
    expect(h.whatsapp.texts(user)).toEqual(["echo: hello gateway from whatsapp"]);
    gw.child.kill("SIGTERM");
    expect(await gw.exit).toBe(0);

    // The gateway's own store: the turn ran in the session WhatsApp DMs are keyed on (as Hermes keys them).
    const db = new DatabaseSync(path.join(dir, "gw-wa.db"), { readOnly: true });
    try {
      const sessions = db
        .prepare("SELECT DISTINCT session FROM messages")
        .all()
        .map((r) => String(r.session).replace(/#\d+$/, ""));
      expect(sessions).toEqual([`agent:main:whatsapp:dm:${user}`]);
    } finally {
      db.close();
    }
  });
});
