import { describe, expect, it } from "vitest";
import { dc, sl, tg } from "../support/fixtures.ts";
import { mutations, NOT_OBJECTS } from "../support/mutate.ts";
import { discordHeaders, slackHeaders, telegramHeaders, whatsappHeaders } from "../support/signing.ts";
import { wa } from "../support/whatsapp-fixtures.ts";
import { deliver, settle } from "./platform-helpers.ts";

// Chats and users of their own (the runtime's storage is shared with the other files): user 1008.

/** Signs and delivers a raw body; returns its status. */
async function send(platform: "telegram" | "discord" | "slack" | "whatsapp", body: string): Promise<number> {
  const headers =
    platform === "telegram"
      ? telegramHeaders()
      : platform === "discord"
        ? await discordHeaders(body)
        : platform === "whatsapp"
          ? await whatsappHeaders(body)
          : await slackHeaders(body);
  return (await deliver(platform, body, headers)).status;
}

async function statuses(platform: "telegram" | "discord" | "slack" | "whatsapp", bases: unknown[], perBase: number, seed: number): Promise<number[]> {
  const out: number[] = [];
  for (const [i, base] of bases.entries()) {
    for (const variant of mutations(base, perBase, seed + i)) out.push(await send(platform, JSON.stringify(variant)));
  }
  for (const body of NOT_OBJECTS) out.push(await send(platform, body));
  return out;
}

describe("regression: correctly signed but malformed bodies answered 500 (platforms retry 5xx for hours)", () => {
  it("Telegram: every hostile update gets a 2xx", async () => {
    const got = await statuses(
      "telegram",
      [
        tg.dm("hi", 1008),
        tg.group("hey", { mention: true, userId: 1008, chatId: -100801 }),
        tg.topic("t", 5, { userId: 1008, chatId: -100802 }),
        tg.command("resume", "x", 1008),
      ],
      40,
      101,
    );
    await settle();
    expect(got.filter((s) => s >= 300)).toEqual([]);
  });

  it("Discord: every hostile interaction gets a 2xx or a 400, never a 5xx", async () => {
    const got = await statuses(
      "discord",
      [
        dc.ping(),
        dc.command("ask", { prompt: "hi" }, { channelId: "3801" }),
        dc.command("resume", { session: "x" }, { thread: { id: "4801", parent: "3801" } }),
        dc.command("stop", {}, { dm: true, channelId: "3802" }),
      ],
      40,
      202,
    );
    await settle();
    expect(got.filter((s) => s >= 500 || (s >= 300 && s !== 400))).toEqual([]);
  });

  it("Slack: every hostile envelope gets a 2xx", async () => {
    const got = await statuses(
      "slack",
      [sl.dm("hi", "U1001", "D1801"), sl.mention("hey", "U1001", "C1801"), sl.threadReply("more", "1700000000.000100", "U1001", "C1802"), sl.challenge()],
      40,
      303,
    );
    await settle();
    expect(got.filter((s) => s >= 300)).toEqual([]);
  });

  it("WhatsApp: every hostile batch gets a 2xx", async () => {
    const u = "15550001004";
    const bases = [
      wa.envelope(wa.value(u, [wa.text(u, "hi"), wa.message(u, "location", { location: { latitude: 1, longitude: 2, name: "x" } })])),
      wa.envelope(wa.value(u, [wa.message(u, "image", { image: { id: "770001", mime_type: "image/png", caption: "c" } })])),
      wa.envelope(wa.value(u, [wa.message(u, "interactive", { interactive: { type: "list_reply", list_reply: { id: "1", title: "t" } } })])),
      wa.envelope(wa.status("wamid.x", "failed", u, [{ code: 131047, title: "Re-engagement message" }])),
    ];
    const got = await statuses("whatsapp", bases, 25, 404);
    await settle();
    expect(got.filter((s) => s >= 300)).toEqual([]);
  });
});
