import { describe, expect, it } from "vitest";
import { discordTargets } from "../../workers/platforms/discord/target.ts";
import { slackTargets } from "../../workers/platforms/slack/target.ts";
import type { TargetCodec } from "../../workers/platforms/target.ts";
import { telegramTargets } from "../../workers/platforms/telegram/target.ts";
import { whatsappTargets } from "../../workers/platforms/whatsapp/target.ts";
import { matrixTargets } from "../../workers/platforms/matrix/target.ts";
import type { ReplyTarget } from "../../workers/platforms/types.ts";
import { targetFromWire } from "../../workers/relay/frames.ts";

/**
 * The reply-target codec contract, one suite run against every adapter (in the spirit of
 * vercel/chat's thread-id contract): typed targets round-trip, refs stored by earlier
 * versions (D1 turns, R2, relay buffers) still decode to the same thing, and refs an
 * adapter never made are refused.
 */
interface CodecCase<T extends { private: boolean }> {
  codec: TargetCodec<T>;
  /** Typed targets covering each shape (plain chat, thread, reply or interaction). */
  samples: T[];
  /** Refs as the previous encoder (`encodeRef`) stored them, with what they decode to. */
  stored: Array<{ ref: string; private: boolean; decoded: T; where: { chatId: string; threadId: string | null } }>;
  /** Refs of this platform that must not decode (why: the test name). */
  hostile: Record<string, string>;
}

function codecContract<T extends { private: boolean }>(c: CodecCase<T>): void {
  const { codec } = c;
  const at = (ref: string, isPrivate = false): ReplyTarget => ({ platform: codec.platform, private: isPrivate, ref });

  it("round-trips every typed target through its opaque form, and the opaque form through JSON (storage, frames)", () => {
    for (const t of c.samples) {
      const opaque = codec.encode(t);
      expect(opaque.platform).toBe(codec.platform);
      expect(codec.decode(opaque)).toEqual(t);
      expect(codec.decode(JSON.parse(JSON.stringify(opaque)) as ReplyTarget)).toEqual(t);
      expect(codec.decode(targetFromWire(JSON.stringify(opaque))!)).toEqual(t);
    }
  });

  it("reads the refs stored before the codec, and encodes them the same bytes again", () => {
    for (const s of c.stored) {
      const decoded = codec.decode(at(s.ref, s.private));
      expect(decoded, s.ref).toEqual(s.decoded);
      expect(codec.where(decoded!)).toEqual(s.where);
      expect(codec.encode(decoded!).ref).toBe(s.ref);
    }
  });

  it("refuses refs it never made: not JSON, not an object, extra keys, non-strings, oversize, hostile values", () => {
    const generic: Record<string, string> = {
      "not JSON": "{c:1",
      "an array": '["1"]',
      null: "null",
      "a string": '"1001"',
      "an unknown key": JSON.stringify({ ...JSON.parse(codec.encode(c.samples[0]!).ref), x: "1" }),
      "a number where a string belongs": '{"c":1001}',
      oversize: JSON.stringify({ c: "1".repeat(5000) }),
      empty: "{}",
    };
    for (const [why, ref] of Object.entries({ ...generic, ...c.hostile })) {
      expect(codec.decode(at(ref)), why).toBeNull();
      expect(() => codec.read(at(ref)), why).toThrow(/reply target this Worker made/);
    }
  });

  it("refuses another platform's target, even when its ref would parse", () => {
    for (const platform of ["telegram", "discord", "slack"] as const) {
      if (platform === codec.platform) continue;
      expect(codec.decode({ ...codec.encode(c.samples[0]!), platform })).toBeNull();
    }
  });
}

describe("reply-target codec contract: Telegram", () => {
  codecContract({
    codec: telegramTargets,
    samples: [
      { chatId: 1001, topic: null, replyTo: null, private: true },
      { chatId: -1001234567890, topic: 7, replyTo: 42, private: false },
      { chatId: -100555, topic: 1, replyTo: null, private: false },
    ],
    stored: [
      { ref: '{"c":"1001"}', private: true, decoded: { chatId: 1001, topic: null, replyTo: null, private: true }, where: { chatId: "1001", threadId: null } },
      {
        ref: '{"c":"-1001234567890","t":"7","r":"42"}',
        private: false,
        decoded: { chatId: -1001234567890, topic: 7, replyTo: 42, private: false },
        where: { chatId: "-1001234567890", threadId: "7" },
      },
      {
        ref: '{"c":"-100555","t":"1"}',
        private: false,
        decoded: { chatId: -100555, topic: 1, replyTo: null, private: false },
        where: { chatId: "-100555", threadId: "1" },
      },
    ],
    hostile: {
      "a chat named, not numbered": '{"c":"@channel"}',
      "a topic that is not a number": '{"c":"-100","t":"7; drop"}',
      "a negative message id": '{"c":"-100","r":"-5"}',
      "an exponent": '{"c":"1e21"}',
    },
  });
});

describe("reply-target codec contract: Discord", () => {
  codecContract({
    codec: discordTargets,
    samples: [
      { channel: "3001", thread: null, interaction: null, replyTo: null, private: false },
      { channel: "3002", thread: "3002", interaction: null, replyTo: null, private: false },
      // A Gateway message, answered as a reply to it.
      { channel: "3004", thread: null, interaction: null, replyTo: "3005", private: true },
      { channel: "3003", thread: null, interaction: { applicationId: "5550001", token: "aW50ZXJhY3Rpb24.tok-en_1" }, replyTo: null, private: true },
    ],
    stored: [
      {
        ref: '{"c":"3001"}',
        private: false,
        decoded: { channel: "3001", thread: null, interaction: null, replyTo: null, private: false },
        where: { chatId: "3001", threadId: null },
      },
      {
        ref: '{"c":"9","t":"9","a":"5550001","k":"itok-12"}',
        private: false,
        decoded: { channel: "9", thread: "9", interaction: { applicationId: "5550001", token: "itok-12" }, replyTo: null, private: false },
        where: { chatId: "9", threadId: "9" },
      },
      // An interaction whose channel Discord did not name was stored without one.
      {
        ref: '{"a":"5550001","k":"tok"}',
        private: true,
        decoded: { channel: null, thread: null, interaction: { applicationId: "5550001", token: "tok" }, replyTo: null, private: true },
        where: { chatId: "", threadId: null },
      },
    ],
    hostile: {
      "a token that climbs out of the webhook path": '{"c":"1","a":"5550001","k":"../../channels/1/messages"}',
      "a token with a query": '{"c":"1","a":"5550001","k":"tok?wait=false"}',
      "a token without its application": '{"c":"1","k":"tok"}',
      "a channel with a slash": '{"c":"1/messages"}',
      "a message answered that is a path": '{"c":"1","r":"1/../2"}',
    },
  });
});

describe("reply-target codec contract: Slack", () => {
  codecContract({
    codec: slackTargets,
    samples: [
      { channel: "D1001", threadTs: null, responseUrl: null, private: true },
      { channel: "C1", threadTs: "1700000001.000100", responseUrl: null, private: false },
      { channel: "C2", threadTs: null, responseUrl: "https://hooks.slack.com/commands/T1/2/x", private: false },
    ],
    stored: [
      {
        ref: '{"c":"D1001"}',
        private: true,
        decoded: { channel: "D1001", threadTs: null, responseUrl: null, private: true },
        where: { chatId: "D1001", threadId: null },
      },
      {
        ref: '{"c":"C1","t":"1700000001.5"}',
        private: false,
        decoded: { channel: "C1", threadTs: "1700000001.5", responseUrl: null, private: false },
        where: { chatId: "C1", threadId: "1700000001.5" },
      },
      {
        ref: '{"c":"C9","u":"https://hooks.slack.test/commands/T0TEAM/1/x"}',
        private: false,
        decoded: { channel: "C9", threadTs: null, responseUrl: "https://hooks.slack.test/commands/T0TEAM/1/x", private: false },
        where: { chatId: "C9", threadId: null },
      },
    ],
    hostile: {
      "a response_url over plain http": '{"c":"C1","u":"http://169.254.169.254/latest"}',
      "a javascript: response_url": '{"c":"C1","u":"javascript:alert(1)"}',
      "a channel that is a path": '{"c":"C1/../admin"}',
      "a thread ts that is not one": '{"c":"C1","t":"now"}',
    },
  });
});

describe("relay frames carry targets unchanged", () => {
  it("a frame's target is the opaque JSON it always was; a hand-back of another shape is refused", () => {
    const t = telegramTargets.encode({ chatId: -100, topic: 7, replyTo: null, private: false });
    expect(JSON.parse(JSON.stringify(t))).toEqual({ platform: "telegram", private: false, ref: '{"c":"-100","t":"7"}' });
    expect(targetFromWire('{"platform":"telegram","private":false,"ref":"{\\"c\\":\\"-100\\"}"}')).toEqual({
      platform: "telegram",
      private: false,
      ref: '{"c":"-100"}',
    });
    for (const bad of [
      '{"platform":"irc","private":false,"ref":"{}"}',
      '{"platform":"telegram","private":"no","ref":"{}"}',
      '{"platform":"telegram","private":false,"ref":"{}","x":1}',
      "nope",
    ])
      expect(targetFromWire(bad), bad).toBeNull();
  });
});

describe("reply-target codec contract: WhatsApp", () => {
  codecContract({
    codec: whatsappTargets,
    samples: [
      { waId: "16505551234", replyTo: null, private: true },
      { waId: "16505551234", replyTo: "wamid.HBgLMTY1MDM4Nzk0MzkVAgASGBQzQTRBNjU5OUFFRTAzODEwMTQ0RgA=", private: true },
    ],
    stored: [
      {
        ref: '{"c":"16505551234"}',
        private: true,
        decoded: { waId: "16505551234", replyTo: null, private: true },
        where: { chatId: "16505551234", threadId: null },
      },
      {
        ref: '{"c":"15550001001","m":"wamid.abc="}',
        private: true,
        decoded: { waId: "15550001001", replyTo: "wamid.abc=", private: true },
        where: { chatId: "15550001001", threadId: null },
      },
    ],
    hostile: {
      "a number with a plus (the API wants digits)": '{"c":"+16505551234"}',
      "a wa_id with a path in it": '{"c":"1/messages"}',
      "a wamid with a space": '{"c":"1","m":"wamid. x"}',
      "a thread, which WhatsApp has not": '{"c":"1","t":"2"}',
    },
  });
});

describe("target codec contract: matrix", () => {
  codecContract({
    codec: matrixTargets,
    samples: [
      { roomId: "!jEsUZKDJdhlrceRyVU:example.org", threadRoot: null, replyTo: null, private: false },
      { roomId: "!jEsUZKDJdhlrceRyVU:example.org", threadRoot: "$143273582443PhrSn:example.org", replyTo: "$ev2:example.org", private: false },
      // Room version 12: a room id without a server; event ids in base64 with `+` and `/` (v3).
      { roomId: "!31hneApxJ_1o-63DmFrpeqnkFfWppnzWso1JvH3ogLM", threadRoot: null, replyTo: "$acR1l0raoZnm60CBwAVgqbZqoO/mYU81xysh1u7XcJk", private: true },
    ],
    stored: [
      {
        ref: '{"r":"!room:example.org","t":"$root:example.org","m":"$ev:example.org"}',
        private: false,
        decoded: { roomId: "!room:example.org", threadRoot: "$root:example.org", replyTo: "$ev:example.org", private: false },
        where: { chatId: "!room:example.org", threadId: "$root:example.org" },
      },
      {
        ref: '{"r":"!dm-alice:example.org"}',
        private: true,
        decoded: { roomId: "!dm-alice:example.org", threadRoot: null, replyTo: null, private: true },
        where: { chatId: "!dm-alice:example.org", threadId: null },
      },
    ],
    hostile: {
      "a room id with a path in it": '{"r":"!room/../../admin:example.org"}',
      "a room alias, not an id": '{"r":"#room:example.org"}',
      "a user id as the room": '{"r":"@alice:example.org"}',
      "an event id with a space": '{"r":"!room:example.org","m":"$ev x"}',
      "a thread root that is a URL": '{"r":"!room:example.org","t":"https://evil.example/x"}',
      "an unknown key": '{"r":"!room:example.org","c":"1"}',
      "a server with a query": '{"r":"!room:example.org?access_token=x"}',
    },
  });
});
