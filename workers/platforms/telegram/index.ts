import { Bot, GrammyError, HttpError } from "grammy";
import type { UserFromGetMe } from "grammy/types";
import { codeForStatus, mapErrors, PLATFORM_TIMEOUT_MS, PlatformApiError, type Capabilities, type HandoffThread, type InboundMessage, type Intake, type PlatformAdapter, type ReplyTarget, type SentMessage, type Verification } from "../types.ts";
import { GENERAL_TOPIC, parseTelegramUpdate, type TelegramBotIdentity } from "./parse.ts";
import { verifyTelegram } from "./verify.ts";

export { parseTelegramUpdate } from "./parse.ts";
export { SECRET_HEADER, verifyTelegram } from "./verify.ts";

/** Settings the Telegram adapter runs on. */
export interface TelegramSettings {
  token: string;
  webhookSecret: string;
  apiRoot: string;
  fetch?: typeof fetch;
}

export const TELEGRAM_CAPABILITIES: Capabilities = {
  maxMessageLength: 4096,
  lengthUnit: "utf16",
  threads: true,
  edits: true,
  typing: true,
  editIntervalMs: { private: 1100, group: 3100 },
};

/** getMe answers, per token, for this isolate: one getMe per cold start, not per request. */
const botInfoCache = new Map<string, Promise<UserFromGetMe>>();

function toPlatformError(err: unknown): Error {
  if (err instanceof GrammyError) {
    const retryAfter = err.parameters.retry_after;
    return new PlatformApiError("telegram", codeForStatus(err.error_code), `Telegram ${err.method}: ${err.description}`, { status: err.error_code, ...(retryAfter !== undefined ? { retryAfter } : {}) });
  }
  if (err instanceof HttpError) return new PlatformApiError("telegram", "network", `Telegram unreachable: ${err.message}`);
  return err instanceof Error ? err : new Error(String(err));
}

const call = <T>(fn: () => Promise<T>) => mapErrors(fn, toPlatformError);

/** Telegram over its Bot API (grammY), webhook in, `sendMessage`/`editMessageText` out. */
export class TelegramAdapter implements PlatformAdapter {
  readonly name = "telegram" as const;
  readonly capabilities = TELEGRAM_CAPABILITIES;
  readonly #settings: TelegramSettings;
  readonly #fetch: typeof fetch;
  #bot: Promise<Bot> | null = null;

  /** Does no I/O: the bot's identity is asked for (once per isolate) when first needed. */
  constructor(settings: TelegramSettings) {
    this.#settings = settings;
    this.#fetch = settings.fetch ?? ((input, init) => fetch(input, init));
  }

  #client() {
    return { apiRoot: this.#settings.apiRoot, fetch: this.#fetch as never, timeoutSeconds: PLATFORM_TIMEOUT_MS / 1000 };
  }

  /** grammY's Bot, built with botInfo so it never calls getMe on its own. */
  #getBot(): Promise<Bot> {
    this.#bot ??= this.#botInfo().then((botInfo) => new Bot(this.#settings.token, { botInfo, client: this.#client() }));
    this.#bot.catch(() => (this.#bot = null));
    return this.#bot;
  }

  #botInfo(): Promise<UserFromGetMe> {
    const key = `${this.#settings.apiRoot}|${this.#settings.token}`;
    let info = botInfoCache.get(key);
    if (!info) {
      const probe = new Bot(this.#settings.token, { client: this.#client() });
      info = call(() => probe.api.getMe());
      botInfoCache.set(key, info);
      info.catch(() => botInfoCache.delete(key));
    }
    return info;
  }

  async identity(): Promise<TelegramBotIdentity> {
    const info = await this.#botInfo();
    return { id: info.id, username: info.username };
  }

  verify(headers: Headers, _rawBody: Uint8Array): Promise<Verification> {
    return verifyTelegram(headers, this.#settings.webhookSecret);
  }

  async parse(rawBody: string): Promise<Intake> {
    return parseTelegramUpdate(rawBody, await this.identity());
  }

  acknowledge(_message: InboundMessage): Response {
    return new Response(null, { status: 200 });
  }

  async send(target: ReplyTarget, text: string): Promise<SentMessage> {
    const sent = await call(async () =>
      (await this.#getBot()).api.sendMessage(Number(target.chatId), text, {
        // The General topic takes no thread id on send.
        ...(target.threadId && target.threadId !== GENERAL_TOPIC ? { message_thread_id: Number(target.threadId) } : {}),
        ...(target.replyTo ? { reply_parameters: { message_id: Number(target.replyTo), allow_sending_without_reply: true } } : {}),
        link_preview_options: { is_disabled: true },
      }),
    );
    return { messageId: String(sent.message_id) };
  }

  async edit(target: ReplyTarget, messageId: string, text: string): Promise<void> {
    try {
      await call(async () => (await this.#getBot()).api.editMessageText(Number(target.chatId), Number(messageId), text, { link_preview_options: { is_disabled: true } }));
    } catch (err) {
      // Editing to the same text is not an error worth reporting.
      if (err instanceof PlatformApiError && /message is not modified/i.test(err.message)) return;
      throw err;
    }
  }

  async typing(target: ReplyTarget): Promise<void> {
    await call(async () => (await this.#getBot()).api.sendChatAction(Number(target.chatId), "typing", target.threadId && target.threadId !== GENERAL_TOPIC ? { message_thread_id: Number(target.threadId) } : {}));
  }

  /** A new forum topic (forum supergroups, and private chats with topics enabled); null elsewhere. */
  async createHandoffThread(parentChatId: string, name: string): Promise<HandoffThread | null> {
    try {
      const topic = await call(async () => (await this.#getBot()).api.createForumTopic(Number(parentChatId), name.slice(0, 128)));
      return { chatId: parentChatId, threadId: String(topic.message_thread_id) };
    } catch (err) {
      if (err instanceof PlatformApiError && (err.code === "rejected" || err.code === "not_found")) return null;
      throw err;
    }
  }

  /** Private chats have positive ids, groups negative ones; a topic is its group plus thread. */
  async sourceFor(chatId: string, threadId: string | null) {
    const isPrivate = !chatId.startsWith("-");
    return {
      source: { platform: "telegram" as const, chatType: isPrivate ? ("dm" as const) : ("group" as const), chatId, threadId },
      target: { platform: "telegram" as const, chatId, threadId, isPrivate },
    };
  }
}
