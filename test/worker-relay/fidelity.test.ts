import { describe, expect, it } from "vitest";
import { tg } from "../support/fixtures.ts";
import { TELEGRAM_TEST } from "../support/signing.ts";
import { toTelegram } from "../worker/platform-helpers.ts";
import { telegram } from "../worker/setup.ts";
import { gateway } from "./helpers.ts";

describe("relay fidelity with Hermes gateways", () => {
  it("a reply whose thread is in action.metadata.thread_id, reply_to empty, goes to that forum topic", async () => {
    const s = await gateway();
    s.send({ type: "outbound", requestId: "h1", platform: "telegram", action: { op: "send", chat_id: "-100777", content: "in the topic", reply_to: "", metadata: { thread_id: "33" } } });
    expect(await s.next("outbound_result")).toMatchObject({ requestId: "h1", result: { success: true } });
    const sent = telegram.called("/sendMessage").at(-1)!;
    expect(sent.body).toMatchObject({ chat_id: -100777, message_thread_id: 33, text: "in the topic" });
    expect(sent.body.reply_parameters).toBeUndefined();
    s.ws.close(1000);
  });

  it("a forum topic goes as chat_type 'forum', the sender's display name as user_name and handle as user_handle", async () => {
    const s = await gateway();
    const update = tg.topic(`@${TELEGRAM_TEST.username} hello topic`, 33, { chatId: -100778, userId: 1001 });
    Object.assign(update.message, { from: { id: 1001, is_bot: false, first_name: "Ada", last_name: "Lovelace", username: "ada" }, entities: [{ type: "mention", offset: 0, length: TELEGRAM_TEST.username.length + 1 }] });
    await toTelegram(update);
    const frame = await s.next("inbound");
    expect((frame.event as { source: unknown }).source).toMatchObject({ platform: "telegram", chat_id: "-100778", chat_type: "forum", thread_id: "33", user_id: "1001", user_name: "Ada Lovelace", user_handle: "ada" });
    s.ws.close(1000);
  });
});
