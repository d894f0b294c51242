import { describe, expect, it } from "vitest";
import type { TurnOutcome } from "../../workers/agent/index.ts";
import { adapterChannel } from "../../workers/conversations/channels.ts";
import { TelegramAdapter, telegramTarget } from "../../workers/platforms/telegram/index.ts";
import { ReplyStreamer } from "../../workers/runtime/index.ts";
import { FakeTelegram } from "../support/fake-platforms.ts";
import { ManualClock } from "../support/manual-clock.ts";
import { TELEGRAM_TEST } from "../support/signing.ts";

const done: TurnOutcome = { finishReason: "stop", text: "", usage: { input: 0, output: 0 }, toolCalls: 0 };

let chats = 7000;

/** The runtime's streamer over the real Telegram adapter, talking to the fake Bot API. */
function rig() {
  const telegram = new FakeTelegram();
  const adapter = new TelegramAdapter({
    token: TELEGRAM_TEST.token,
    webhookSecret: TELEGRAM_TEST.secret,
    apiRoot: "https://telegram.test",
    fetch: (i, init) => telegram.handle(new Request(i, init)),
  });
  const channel = adapterChannel(adapter, telegramTarget(String(++chats), null, null));
  const clock = new ManualClock(0);
  const reply = new ReplyStreamer(channel, { clock, log: () => {} });
  const methods = () => telegram.calls.map((c) => c.path.split("/").pop());
  /** Streams `text` and lets its live update happen. */
  const stream = async (text: string) => {
    reply.event({ type: "text", text });
    await clock.advanceSettling(0);
  };
  return { telegram, channel, reply, methods, stream };
}

describe("streamed replies rendered for the platform", () => {
  it("a reply that really ends in an unclosed ** still gets its final delivery after a preview that hid the marker", async () => {
    const { telegram, channel, reply, stream } = rig();
    await stream("Total: 2 **");
    const end = await reply.end(done);
    // The live update showed exactly this text, rendered as a preview ("**" hidden)…
    expect(telegram.calls.map((c) => c.body.text)).toEqual(["Total: 2"]);
    // …which is not what its final rendering shows, so the runtime must still deliver it.
    expect(end.shown).toBe(false);
    await channel.show(end.text, end.ids, "final");
    expect(telegram.calls.map((c) => c.body.text)).toEqual(["Total: 2", "Total: 2 **"]);
  });

  it("a well-formed reply the live update showed in full needs no final delivery", async () => {
    const { telegram, reply, stream } = rig();
    await stream("**Done**, see `x`.");
    const end = await reply.end(done);
    expect(end.shown).toBe(true);
    expect(telegram.calls.map((c) => [c.body.text, c.body.entities, c.body.parse_mode])).toEqual([
      [
        "Done, see x.",
        [
          { type: "bold", offset: 0, length: 4 },
          { type: "code", offset: 10, length: 1 },
        ],
        undefined,
      ],
    ]);
  });

  it("the final delivery of a long reply leaves the first message alone when the live update already shows that part", async () => {
    const { channel, reply, methods, stream } = rig();
    await stream(`${"word ".repeat(1000)}\n\n${"more ".repeat(100)}`);
    const end = await reply.end(done);
    expect(end.shown).toBe(false);
    expect(methods()).toEqual(["sendMessage"]);
    const shown = await channel.show(end.text, end.ids, "final");
    expect(shown.ids).toHaveLength(2);
    // No editMessageText: the first part is unchanged; only the second is posted.
    expect(methods()).toEqual(["sendMessage", "sendMessage"]);
  });
});
