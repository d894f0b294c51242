import { evictDurableObject } from "cloudflare:test";
import { env, selfFetch } from "../worker/config.ts";
import { describe, expect, it } from "vitest";
import { PNG } from "../support/files.ts";
import { tg } from "../support/fixtures.ts";
import { TELEGRAM_TEST } from "../support/signing.ts";
import { lastUserText } from "../support/fake-llm.ts";
import { sl } from "../support/fixtures.ts";
import { settle, toSlack, toTelegram } from "../worker/platform-helpers.ts";
import { llm, slackFiles, telegram } from "../worker/setup.ts";
import { gateway, GW } from "./helpers.ts";

describe("relay fidelity with Hermes gateways", () => {
  it("a reply whose thread is in action.metadata.thread_id, reply_to empty, goes to that forum topic", async () => {
    const s = await gateway();
    s.send({
      type: "outbound",
      requestId: "h1",
      platform: "telegram",
      action: { op: "send", chat_id: "-100777", content: "in the topic", reply_to: "", metadata: { thread_id: "33" } },
    });
    expect(await s.next("outbound_result")).toMatchObject({ requestId: "h1", result: { success: true } });
    const sent = telegram.called("/sendMessage").at(-1)!;
    expect(sent.body).toMatchObject({ chat_id: -100777, message_thread_id: 33, text: "in the topic" });
    expect(sent.body.reply_parameters).toBeUndefined();
    s.ws.close(1000);
  });

  it("a handed-back target the Telegram codec refuses (a chat named, not numbered) is not used: the reply goes to the action's chat_id", async () => {
    const s = await gateway();
    const forged = JSON.stringify({ platform: "telegram", private: false, ref: JSON.stringify({ c: "@elsewhere", t: "5" }) });
    s.send({
      type: "outbound",
      requestId: "h2",
      platform: "telegram",
      action: { op: "send", chat_id: "-100779", content: "where it belongs", target: forged },
    });
    expect(await s.next("outbound_result")).toMatchObject({ requestId: "h2", result: { success: true } });
    const sent = telegram.called("/sendMessage").at(-1)!;
    expect(sent.body).toMatchObject({ chat_id: -100779, text: "where it belongs" });
    expect(sent.body.message_thread_id).toBeUndefined();
    s.ws.close(1000);
  });

  it("a forum topic goes as chat_type 'forum', the sender's display name as user_name and handle as user_handle", async () => {
    const s = await gateway();
    const update = tg.topic(`@${TELEGRAM_TEST.username} hello topic`, 33, { chatId: -100778, userId: 1001 });
    Object.assign(update.message, {
      from: { id: 1001, is_bot: false, first_name: "Ada", last_name: "Lovelace", username: "ada" },
      entities: [{ type: "mention", offset: 0, length: TELEGRAM_TEST.username.length + 1 }],
    });
    await toTelegram(update);
    const frame = await s.next("inbound");
    expect((frame.event as { source: unknown }).source).toMatchObject({
      platform: "telegram",
      chat_id: "-100778",
      chat_type: "forum",
      thread_id: "33",
      user_id: "1001",
      user_name: "Ada Lovelace",
      user_handle: "ada",
    });
    s.ws.close(1000);
  });
});

const inbound = (text: string) => (f: Record<string, unknown>) => f.type === "inbound" && (f.event as { text: string }).text === text;

describe("attachments over the relay", () => {
  it("the connector fetches a photo with the platform's credentials and sends signed links in media_urls/media, in order, even to a gateway that was offline", async () => {
    telegram.serveFile("relay-photo", PNG, "application/octet-stream", "photos/relay.jpg");
    const photo = tg.dm("", 1001, {
      caption: "look at this",
      photo: [{ file_id: "relay-photo", file_unique_id: "p", width: 10, height: 10, file_size: PNG.byteLength }],
    });
    delete (photo.message as Record<string, unknown>).text;
    await toTelegram(photo);
    await toTelegram(tg.dm("and then this", 1001));
    const s = await gateway();
    try {
      const first = await s.next(inbound("look at this"));
      const second = await s.next(inbound("and then this"));
      // In order: the text sent after the photo waited for the photo's fetch.
      expect(s.frames.indexOf(first)).toBeLessThan(s.frames.indexOf(second));
      const ev = first.event as { text: string; media_urls: string[]; media: unknown[]; message_type: string };
      expect(ev.message_type).toBe("image");
      expect(ev.media).toEqual([{ kind: "image", mime: "image/png", size: PNG.byteLength, filename: null, seconds: null }]);
      expect(ev.media_urls).toHaveLength(1);
      const link = new URL(ev.media_urls[0]!);
      expect(link.origin).toBe("http://edge.test");
      const got = await selfFetch(link.href);
      expect(got.status).toBe(200);
      expect(new Uint8Array(await got.arrayBuffer())).toEqual(PNG);
      link.searchParams.set("sig", "0".repeat(64));
      expect((await selfFetch(link.href)).status).toBe(401);
      expect((await selfFetch(`http://edge.test/relay/media/sessions/x/y?exp=9999999999&sig=${"0".repeat(64)}`)).status).toBe(404);
      s.send({ type: "inbound_ack", bufferId: first.bufferId }, { type: "inbound_ack", bufferId: second.bufferId });
    } finally {
      s.ws.close(1000);
    }
  });

  it("regression: a finished download left its one-minute timeout pending, and the Relay object could not hibernate", async () => {
    telegram.serveFile("relay-photo-2", PNG, "image/png", "photos/relay-2.png");
    const photo = tg.dm("", 1002, { caption: "and hibernate", photo: [{ file_id: "relay-photo-2", file_unique_id: "q", width: 1, height: 1 }] });
    delete (photo.message as Record<string, unknown>).text;
    const s = await gateway();
    try {
      await toTelegram(photo);
      const f = await s.next(inbound("and hibernate"));
      s.send({ type: "inbound_ack", bufferId: f.bufferId });
      // Hibernating waits for the object's timers: the download's ran on for a minute (then
      // relay.suite.ts's hibernation test, run soon after this file, timed out in here).
      await evictDurableObject(env.RELAY.getByName(GW.id));
    } finally {
      s.ws.close(1000);
    }
  });

  it("a file the connector could not fetch is listed with why, and the words still go", async () => {
    const s = await gateway();
    try {
      const doc = tg.dm("", 1002, {
        caption: "read this",
        document: { file_id: "no-such-file", file_unique_id: "n", file_name: "x.txt", mime_type: "text/plain", file_size: 5 },
      });
      delete (doc.message as Record<string, unknown>).text;
      await toTelegram(doc);
      const ev = (await s.next(inbound("read this"))).event as { text: string; media_urls: string[]; media: Array<{ error?: string }> };
      expect(ev.text).toBe("read this");
      expect(ev.media_urls).toEqual([""]);
      expect(ev.media[0]!.error).toMatch(/^Telegram getFile failed: .*invalid file_id/);
    } finally {
      s.ws.close(1000);
    }
  });
});

describe("voice notes with LLM_TRANSCRIBE_MODEL (at the edge)", () => {
  const voice = (channel: string) => {
    slackFiles.serve(`/files-pri/T-${channel}/voice.ogg`, new Uint8Array([0x4f, 0x67, 0x67, 0x53, 9, 9]), "audio/ogg");
    const dm = sl.dm("", "U1001", channel);
    Object.assign(dm.event, {
      subtype: "file_share",
      files: [{ id: "FV", name: "voice.ogg", mimetype: "audio/ogg", size: 6, url_private: `https://files.slack.test/files-pri/T-${channel}/voice.ogg` }],
    });
    return dm;
  };

  it("are transcribed on POST {LLM_BASE_URL}/audio/transcriptions and the agent reads the words", async () => {
    await toSlack(voice("D7001"));
    await settle();
    expect(llm.transcriptions).toEqual([{ model: "whisper-test", fileName: "voice.ogg", type: "audio/ogg", bytes: 6, authorization: "Bearer test-llm-key" }]);
    expect(lastUserText(llm.calls.at(-1)!.body)).toBe('[audio file voice.ogg (audio/ogg, 6 B), transcribed: "hello from a voice note"]');
  });

  it("a transcription that fails is said, and the turn still runs", async () => {
    llm.transcript = { status: 500 };
    await toSlack(voice("D7002"));
    await settle();
    expect(lastUserText(llm.calls.at(-1)!.body)).toBe(
      "[audio file voice.ogg (audio/ogg, 6 B): it could not be transcribed (the speech-to-text endpoint answered HTTP 500), so what was said is not known]",
    );
  });
});
