/**
 * The per-platform entries of the adapter contract (test/node/adapter-contract.test.ts):
 * how to build each adapter against its fake API, sign a delivery, and say a DM, a group
 * message and a thread message in its payload shapes. A new platform adds one entry here
 * (the suite fails until every name in `PLATFORMS` has one); the suite itself does not change.
 */
import { DiscordAdapter } from "../../workers/platforms/discord/index.ts";
import { MatrixAdapter } from "../../workers/platforms/matrix/index.ts";
import type { PlatformName } from "../../workers/platforms/names.ts";
import { SlackAdapter } from "../../workers/platforms/slack/index.ts";
import { TelegramAdapter } from "../../workers/platforms/telegram/index.ts";
import { WhatsAppAdapter } from "../../workers/platforms/whatsapp/index.ts";
import type { PlatformAdapter } from "../../workers/platforms/types.ts";
import type { CorpusEntry } from "./corpus.ts";
import { FakeDiscord, FakeSlack, FakeTelegram, type ApiCall } from "./fake-platforms.ts";
import { FakeHomeserver } from "./fake-matrix.ts";
import { FakeWhatsApp } from "./fake-whatsapp.ts";
import { mx } from "./matrix-fixtures.ts";
import { dc, sl, tg } from "./fixtures.ts";
import {
  MATRIX_TEST,
  matrixHeaders,
  DISCORD_TEST,
  DISCORD_TEST_PUBLIC_KEY,
  SLACK_TEST,
  TELEGRAM_TEST,
  WHATSAPP_TEST,
  discordHeaders,
  slackHeaders,
  telegramHeaders,
  whatsappHeaders,
} from "./signing.ts";
import { wa } from "./whatsapp-fixtures.ts";

/** A delivery in the platform's shape: its body and whether it is form-encoded. */
export interface Delivery {
  body: string;
  form?: boolean;
}

/** What one platform brings to the contract. */
export interface AdapterEntry {
  name: PlatformName;
  /** A fresh adapter whose API calls go to a fresh fake (`calls` records them; nothing leaves the process). */
  make(bot?: CorpusEntry["bot"]): { adapter: PlatformAdapter; calls: ApiCall[]; fakeFetch: typeof fetch; allowThreadsIn(chatId: string): void };
  /** Headers of a genuine delivery of `body` signed at `nowMs`, and of one signed with the wrong secret or key. */
  sign(body: string, nowMs: number): Promise<Record<string, string>>;
  signWrong(body: string, nowMs: number): Promise<Record<string, string>>;
  /** The headers that carry the signature or secret (each one left out must be refused as missing). */
  signatureHeaders: readonly string[];
  /** Whether the platform signs a timestamp (then an old or future delivery is refused as stale). */
  signsTime: boolean;
  /** Whether the signature covers the body (a shared secret, Telegram's, does not): then a body changed after signing is refused. */
  signsBody: boolean;
  /**
   * The chats the platform serves: a DM-only platform (WhatsApp) declares no groups and no
   * threads, and the group and thread cases do not apply to it (`threads` must match the
   * adapter's `capabilities.threads`).
   */
  serves: { groups: boolean; threads: boolean };
  /** Whether one delivery batches updates (WhatsApp): the suite flattens a batch into its events and notes. */
  batches: boolean;
  /** Two distinct senders. */
  users: readonly [string, string];
  /** A DM from `user` (a chat of its own). */
  dm(user: string): Delivery;
  /** A message addressed to the bot in a shared chat `chatId`, outside any thread (where `serves.groups`). */
  group?(user: string, chatId: string): Delivery;
  /** `/status` from `user`, in the platform's spelling of a command. */
  command(user: string): Delivery;
  /** A message from `user` in the thread `threadId` of chat `chatId`, as a handoff thread's `{chatId, threadId}` names it. */
  inThread?(user: string, chatId: string, threadId: string): Delivery;
  /** A chat where a handoff thread can be made (or, without threads, a chat a handoff can go to). */
  handoffParent: string;
  /** A thread id of the platform's own shape (a topic number, a snowflake, a message ts), where `serves.threads`. */
  sampleThread?: string;
  /** SPEC section 2's keys, spelt out: of `dm(users[0])`, of `group(…, handoffParent)` without the user, of `inThread(…, handoffParent, sampleThread)`. */
  keys: { dm: string; group?: string; thread?: string };
  /** The bot the corpus payloads assume where an entry names none (test/corpus/README.md). */
  corpusBot?: NonNullable<CorpusEntry["bot"]>;
  /** What the webhook answers once a message / a command is taken in: the status, and the JSON body (null: empty). */
  acks: { message: { status: number; json: unknown }; command: { status: number; json: unknown } };
  /** The corpus entry that is the platform's handshake (answered at once), with its answer; null when it has none. */
  handshake: { corpus: string; json: unknown } | null;
  /** The texts this fake received for messages shown (sent or edited), in order. */
  shownTexts(calls: ApiCall[]): string[];
}

/** A fetch answered by a fake platform API, in any runtime. */
const viaFake =
  (fake: { handle(req: Request): Promise<Response> }): typeof fetch =>
  async (input, init) =>
    fake.handle(new Request(input, init));

const json = (v: unknown): Delivery => ({ body: JSON.stringify(v) });

const telegram: AdapterEntry = {
  name: "telegram",
  make(bot) {
    const fake = new FakeTelegram();
    const fakeFetch = viaFake(fake);
    const id = Number(bot?.id ?? TELEGRAM_TEST.botId);
    // The fake knows one token: a corpus bot of another id gets the fake's answer under its own token.
    const token = id === TELEGRAM_TEST.botId ? TELEGRAM_TEST.token : `${id}:CORPUS`;
    const username = String(bot?.username ?? TELEGRAM_TEST.username);
    const answering: typeof fetch = async (input, init) => {
      const url = String(input instanceof Request ? input.url : input);
      if (url.endsWith(`/bot${token}/getMe`)) return Response.json({ ok: true, result: { id, is_bot: true, first_name: "Bot", username } });
      return fakeFetch(input, init);
    };
    const adapter = new TelegramAdapter({ token, webhookSecret: TELEGRAM_TEST.secret, apiRoot: `https://tg.contract.test/${username}`, fetch: answering });
    return { adapter, calls: fake.calls, fakeFetch: answering, allowThreadsIn: (chat) => fake.forums.add(chat) };
  },
  sign: async () => telegramHeaders(),
  signWrong: async () => telegramHeaders(`${TELEGRAM_TEST.secret}-not`),
  signatureHeaders: ["x-telegram-bot-api-secret-token"],
  signsTime: false,
  signsBody: false,
  serves: { groups: true, threads: true },
  batches: false,
  users: ["1001", "1002"],
  dm: (u) => json(tg.dm("hi", Number(u))),
  group: (u, chat) => json(tg.group("hi", { mention: true, userId: Number(u), chatId: Number(chat) })),
  command: (u) => json(tg.command("status", "", Number(u))),
  inThread: (u, chat, thread) => json(tg.topic("hi", Number(thread), { userId: Number(u), chatId: Number(chat) })),
  handoffParent: "-100777",
  sampleThread: "55",
  keys: { dm: "agent:main:telegram:dm:1001", group: "agent:main:telegram:group:-100777", thread: "agent:main:telegram:group:-100777:55" },
  corpusBot: { id: 7000000001, username: "hermes_edge_bot" },
  acks: { message: { status: 200, json: null }, command: { status: 200, json: null } },
  handshake: null,
  shownTexts: (calls) => calls.filter((c) => /\/(sendMessage|editMessageText)$/.test(c.path)).map((c) => String(c.body.text)),
};

const discord: AdapterEntry = {
  name: "discord",
  make(bot) {
    const fake = new FakeDiscord();
    const fakeFetch = viaFake(fake);
    const adapter = new DiscordAdapter({
      applicationId: String(bot?.application_id ?? DISCORD_TEST.applicationId),
      publicKey: DISCORD_TEST_PUBLIC_KEY,
      botToken: DISCORD_TEST.botToken,
      apiBase: "https://discord.contract.test/api/v10",
      fetch: fakeFetch,
    });
    return { adapter, calls: fake.calls, fakeFetch, allowThreadsIn: () => undefined };
  },
  sign: (body, now) => discordHeaders(body, String(Math.floor(now / 1000))),
  // Signed with the right key over another body: what a key the Worker does not trust looks like to it.
  signWrong: (body, now) => discordHeaders(`${body} `, String(Math.floor(now / 1000))),
  signatureHeaders: ["x-signature-ed25519", "x-signature-timestamp"],
  signsTime: true,
  signsBody: true,
  serves: { groups: true, threads: true },
  batches: false,
  users: ["2001", "2002"],
  dm: (u) => json(dc.command("ask", { prompt: "hi" }, { userId: u, channelId: `7${u}`, dm: true })),
  group: (u, chat) => json(dc.command("ask", { prompt: "hi" }, { userId: u, channelId: chat })),
  command: (u) => json(dc.command("status", {}, { userId: u, channelId: "3001" })),
  inThread: (u, chat, thread) => json(dc.command("ask", { prompt: "hi" }, { userId: u, thread: { id: thread, parent: chat } })),
  handoffParent: "3001",
  sampleThread: "4444",
  // A Discord thread is a channel of its own: keyed on the thread, as chat and thread.
  keys: { dm: "agent:main:discord:dm:72001", group: "agent:main:discord:group:3001", thread: "agent:main:discord:thread:4444:4444" },
  // Deferred ("thinking…"); a command's answer is ephemeral (flag 64).
  acks: { message: { status: 200, json: { type: 5 } }, command: { status: 200, json: { type: 5, data: { flags: 64 } } } },
  handshake: { corpus: "ping", json: { type: 1 } },
  shownTexts: (calls) => calls.filter((c) => c.method !== "GET" && typeof c.body.content === "string").map((c) => String(c.body.content)),
};

const slack: AdapterEntry = {
  name: "slack",
  make() {
    const fake = new FakeSlack();
    const fakeFetch = viaFake(fake);
    const adapter = new SlackAdapter({
      botToken: SLACK_TEST.token,
      signingSecret: SLACK_TEST.secret,
      apiUrl: "https://slack.contract.test/api",
      fetch: fakeFetch,
    });
    return { adapter, calls: fake.calls, fakeFetch, allowThreadsIn: () => undefined };
  },
  sign: (body, now) => slackHeaders(body, SLACK_TEST.secret, Math.floor(now / 1000)),
  signWrong: (body, now) => slackHeaders(body, `${SLACK_TEST.secret}-not`, Math.floor(now / 1000)),
  signatureHeaders: ["x-slack-signature", "x-slack-request-timestamp"],
  signsTime: true,
  signsBody: true,
  serves: { groups: true, threads: true },
  batches: false,
  users: ["U1001", "U1002"],
  dm: (u) => json(sl.dm("hi", u, `D${u}`)),
  group: (u, chat) => ({ body: sl.slash("stop", u, chat), form: true }),
  command: (u) => ({ body: sl.slash("status", u, "C1001"), form: true }),
  inThread: (u, chat, thread) => json(sl.threadReply("hi", thread, u, chat)),
  handoffParent: "C1001",
  sampleThread: "1700000000.000900",
  // The workspace is the key's scope.
  keys: {
    dm: `agent:main:slack:dm:${SLACK_TEST.team}:DU1001`,
    group: `agent:main:slack:group:${SLACK_TEST.team}:C1001`,
    thread: `agent:main:slack:group:${SLACK_TEST.team}:C1001:1700000000.000900`,
  },
  acks: { message: { status: 200, json: null }, command: { status: 200, json: null } },
  handshake: { corpus: "url-verification", json: { challenge: "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P" } },
  shownTexts: (calls) => calls.filter((c) => /\/chat\.(postMessage|update)$/.test(c.path)).map((c) => String(c.body.text)),
};

/** DMs only, in batched deliveries signed over the body (no time), no edits: each part of a reply is a message of its own. */
const whatsapp: AdapterEntry = {
  name: "whatsapp",
  make() {
    const fake = new FakeWhatsApp();
    const fakeFetch = viaFake(fake);
    const adapter = new WhatsAppAdapter({
      accessToken: WHATSAPP_TEST.token,
      appSecret: WHATSAPP_TEST.appSecret,
      verifyToken: WHATSAPP_TEST.verifyToken,
      phoneNumberId: WHATSAPP_TEST.phoneNumberId,
      apiBase: "https://graph.contract.test/v23.0",
      fetch: fakeFetch,
    });
    return { adapter, calls: fake.calls, fakeFetch, allowThreadsIn: () => undefined };
  },
  sign: (body) => whatsappHeaders(body),
  signWrong: (body) => whatsappHeaders(body, `${WHATSAPP_TEST.appSecret}-not`),
  signatureHeaders: ["x-hub-signature-256"],
  signsTime: false,
  signsBody: true,
  serves: { groups: false, threads: false },
  batches: true,
  users: ["15550001001", "15550001002"],
  dm: (u) => json(wa.dm(u, "hi")),
  command: (u) => json(wa.dm(u, "/status")),
  handoffParent: "15550001001",
  keys: { dm: "agent:main:whatsapp:dm:15550001001" },
  // Meta wants a bare 200; the verify-token handshake is a GET, answered before intake (test/node/whatsapp-adapter.test.ts).
  acks: { message: { status: 200, json: null }, command: { status: 200, json: null } },
  handshake: null,
  shownTexts: (calls) =>
    calls
      .filter((c) => c.method === "POST" && c.path.endsWith("/messages") && c.body.type === "text")
      .map((c) => String((c.body.text as { body: string }).body)),
};

const MX_ROOM = "!room:example.org";
const mxDm = (user: string) => `!dm-${user.slice(1, user.indexOf(":"))}:example.org`;

/**
 * An application service: transactions batch events, authenticated by the hs_token (no
 * signature: a bearer token covers neither body nor time). A room of two is a DM; the adapter
 * learns member counts from the homeserver before parsing (here: remembered up front).
 */
const matrix: AdapterEntry = {
  name: "matrix",
  make(bot) {
    const fake = new FakeHomeserver();
    const fakeFetch = viaFake(fake);
    const botUser = String(bot?.user_id ?? MATRIX_TEST.bot);
    const adapter = new MatrixAdapter({
      homeserverUrl: MATRIX_TEST.homeserver,
      asToken: MATRIX_TEST.asToken,
      hsToken: MATRIX_TEST.hsToken,
      botUser,
      fetch: fakeFetch,
    });
    const users = ["@alice:example.org", "@bob:example.org"];
    for (const u of users) {
      fake.room(mxDm(u), [u, botUser]);
      adapter.rememberRoom(mxDm(u), 2);
    }
    fake.room(MX_ROOM, [...users, botUser, "@carol:example.org"]);
    adapter.rememberRoom(MX_ROOM, 4);
    if (typeof bot?.direct_room === "string") adapter.rememberRoom(bot.direct_room, 2);
    return { adapter, calls: fake.calls, fakeFetch, allowThreadsIn: () => undefined };
  },
  sign: async () => matrixHeaders(),
  signWrong: async () => matrixHeaders(`${MATRIX_TEST.hsToken}-not`),
  signatureHeaders: ["authorization"],
  signsTime: false,
  signsBody: false,
  serves: { groups: true, threads: true },
  batches: true,
  users: ["@alice:example.org", "@bob:example.org"],
  dm: (u) => ({ body: mx.txn([mx.message(mxDm(u), u, "hi")]) }),
  group: (u, chat) => ({ body: mx.txn([mx.message(chat, u, "hi", { mention: true })]) }),
  command: (u) => ({ body: mx.txn([mx.message(mxDm(u), u, "/status")]) }),
  inThread: (u, chat, thread) => ({ body: mx.txn([mx.message(chat, u, "hi", { thread })]) }),
  handoffParent: MX_ROOM,
  sampleThread: "$threadroot:example.org",
  // As Hermes keys Matrix: the room is the chat (dm or group), a thread's root event the thread.
  keys: {
    dm: "agent:main:matrix:dm:!dm-alice:example.org",
    group: `agent:main:matrix:group:${MX_ROOM}`,
    thread: `agent:main:matrix:group:${MX_ROOM}:$threadroot:example.org`,
  },
  corpusBot: { user_id: "@hermes:example.org" },
  // The spec's answer to a transaction: 200 with an empty object.
  acks: { message: { status: 200, json: {} }, command: { status: 200, json: {} } },
  handshake: null,
  shownTexts: (calls) =>
    calls
      .filter((c) => c.method === "PUT" && c.path.includes("/send/m.room.message/"))
      .map((c) => String(((c.body["m.new_content"] as { body?: unknown } | undefined) ?? c.body).body)),
};

/** Every adapter the contract runs against. */
export const ADAPTER_ENTRIES: readonly AdapterEntry[] = [telegram, discord, slack, whatsapp, matrix];
