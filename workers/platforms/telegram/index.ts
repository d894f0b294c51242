import type { Api } from "grammy";
import { showMarkdown, type Part, type RenderSpec } from "../parts.ts";
import { logger } from "../../log/index.ts";
import {
  codeForStatus,
  mapErrors,
  PLATFORM_TIMEOUT_MS,
  PlatformApiError,
  type Attachment,
  type Capabilities,
  type CommandStyle,
  type HandoffThread,
  type Ingest,
  type PlatformAdapter,
  type PlatformHealth,
  type PlatformEvent,
  type ReplyTarget,
  type SessionSource,
  type Shown,
  type Verification,
  type DirectChat,
} from "../types.ts";
import { GENERAL_TOPIC, parseTelegramUpdate, telegramWireChatType } from "./parse.ts";
import { telegramTarget, telegramTargets } from "./target.ts";
import type { Download } from "../../attachments/index.ts";
import { downloadTelegramFile } from "./files.ts";
import { verifyTelegram } from "./verify.ts";
import { telegramHealth } from "./health.ts";
import { loadGrammy, type Grammy } from "./grammy.ts";

export { telegramTarget } from "./target.ts";

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

/** Replies are sent as plain text plus Bot API entities (never `parse_mode`: nothing needs escaping). */
export const TELEGRAM_RENDER: RenderSpec = { dialect: "telegram", limit: TELEGRAM_CAPABILITIES.maxMessageLength, unit: TELEGRAM_CAPABILITIES.lengthUnit };

/**
 * The bot's username per token, learnt from getMe after a webhook was acknowledged (never
 * before one: a cold isolate parses without it and defers `@name` checks). Only the answer is
 * kept, never a pending call shared between the isolate's objects (a continuation resolved by
 * another object's I/O; docs/startup.md): two first callers at once each ask.
 */
const usernames = new Map<string, string>();

/**
 * When this isolate's learning getMe (warm) was asked per token, while it is unanswered: a
 * flag, not a shared call. Without it every webhook of a cold isolate's first burst asked
 * again (bench:webhooks: 51 getMe for 100 new chats at 50 in flight). A flag older than
 * {@link WARM_STALE_MS} (a call whose request went away) no longer holds the others back.
 */
const warming = new Map<string, number>();
/** Longer than a getMe may take (its timeout): a flag this old belongs to a call that is gone. */
export const WARM_STALE_MS = PLATFORM_TIMEOUT_MS + 1_000;

/** The bot's user id: the part of the token before the colon. */
export function botIdFromToken(token: string): number {
  const id = Number(token.split(":")[0]);
  return Number.isSafeInteger(id) ? id : 0;
}

function toPlatformError(err: unknown, { GrammyError, HttpError }: Grammy): Error {
  if (err instanceof GrammyError) {
    const retryAfter = err.parameters.retry_after;
    return new PlatformApiError("telegram", codeForStatus(err.error_code), `Telegram ${err.method}: ${err.description}`, {
      status: err.error_code,
      ...(retryAfter !== undefined ? { retryAfter } : {}),
    });
  }
  if (err instanceof HttpError) return new PlatformApiError("telegram", "network", `Telegram unreachable: ${err.message}`);
  return err instanceof Error ? err : new Error(String(err));
}

/** Telegram over its Bot API (grammY's `Api`): webhook in, `sendMessage`/`editMessageText` out. */
export class TelegramAdapter implements PlatformAdapter {
  readonly name = "telegram" as const;
  readonly capabilities = TELEGRAM_CAPABILITIES;
  readonly targets = telegramTargets;
  readonly commands: CommandStyle = { prefix: "/", howToTalk: "Send a message to talk to the agent (in groups: mention me or reply to me)." };
  readonly #s: TelegramSettings;
  readonly #fetch: typeof fetch;
  /** grammY's Api, made once the module is loaded (on the first Telegram call); then used by every caller. */
  #made: { api: Api; grammy: Grammy } | null = null;

  /** Does no I/O. */
  constructor(settings: TelegramSettings) {
    this.#s = settings;
    this.#fetch = settings.fetch ?? ((input, init) => fetch(input, init));
  }

  /** The Api: each caller awaits its own load of grammY until one has made it. */
  async #bot(): Promise<{ api: Api; grammy: Grammy }> {
    if (this.#made) return this.#made;
    const grammy = await loadGrammy();
    const { apiRoot, token } = this.#s;
    this.#made ??= { grammy, api: new grammy.Api(token, { apiRoot, fetch: this.#fetch as never, timeoutSeconds: PLATFORM_TIMEOUT_MS / 1000 }) };
    return this.#made;
  }

  /** One Bot API call, its failures as PlatformApiErrors. */
  async #call<T>(fn: (api: Api) => Promise<T>): Promise<T> {
    const { api, grammy } = await this.#bot();
    return mapErrors(
      () => fn(api),
      (err) => toPlatformError(err, grammy),
    );
  }

  get #key(): string {
    return `${this.#s.apiRoot}|${this.#s.token}`;
  }

  /** The bot's username if this isolate has learnt it. */
  knownUsername(): string | null {
    return usernames.get(this.#key) ?? null;
  }

  /** The bot's username (getMe, kept once known for the isolate's life); null when Telegram cannot be asked. */
  async username(): Promise<string | null> {
    const known = this.knownUsername();
    if (known) return known;
    try {
      const me = await this.#call((api) => api.getMe());
      usernames.set(this.#key, me.username);
      return me.username;
    } catch (err) {
      logger.child("telegram").warn("getMe failed", { err });
      return null;
    }
  }

  async addressedBy(mentions: readonly string[]): Promise<boolean> {
    const me = (await this.username())?.toLowerCase();
    return me !== undefined && mentions.includes(me);
  }

  async warm(): Promise<void> {
    if (this.knownUsername()) return;
    const since = warming.get(this.#key);
    if (since !== undefined && Date.now() - since < WARM_STALE_MS) return;
    const mine = Date.now();
    warming.set(this.#key, mine);
    try {
      await this.username();
    } finally {
      if (warming.get(this.#key) === mine) warming.delete(this.#key);
    }
  }

  verify(headers: Headers, _rawBody: Uint8Array): Promise<Verification> {
    return verifyTelegram(headers, this.#s.webhookSecret);
  }

  ingest(body: string): Ingest {
    return parseTelegramUpdate(body, { id: botIdFromToken(this.#s.token), username: this.knownUsername() });
  }

  ack(_event: PlatformEvent): Response {
    return new Response(null, { status: 200 });
  }

  answerInline(): Response | null {
    return null;
  }

  #where(target: ReplyTarget) {
    const t = telegramTargets.read(target);
    // The General topic takes no thread id on send.
    const thread = t.topic !== null && String(t.topic) !== GENERAL_TOPIC ? { message_thread_id: t.topic } : {};
    return { chatId: t.chatId, thread, replyTo: t.replyTo };
  }

  async #send(target: ReplyTarget, part: Part, replyTo: number | null): Promise<string> {
    const { chatId, thread } = this.#where(target);
    const opts = {
      ...thread,
      ...(replyTo !== null ? { reply_parameters: { message_id: replyTo, allow_sending_without_reply: true } } : {}),
      link_preview_options: { is_disabled: true },
    };
    try {
      const sent = await this.#call((api) =>
        api.sendMessage(chatId, part.text, { ...opts, ...(part.entities?.length ? { entities: part.entities as never } : {}) }),
      );
      return String(sent.message_id);
    } catch (err) {
      if (!part.entities?.length || !isEntityError(err)) throw err;
      // Telegram refused the formatting: the words matter more than the looks.
      const sent = await this.#call((api) => api.sendMessage(chatId, part.text, opts));
      return String(sent.message_id);
    }
  }

  async #edit(target: ReplyTarget, id: string, part: Part): Promise<void> {
    const { chatId } = this.#where(target);
    const opts = { link_preview_options: { is_disabled: true } };
    try {
      await this.#call((api) =>
        api.editMessageText(chatId, Number(id), part.text, { ...opts, ...(part.entities?.length ? { entities: part.entities as never } : {}) }),
      );
    } catch (err) {
      // Editing to the same text is not an error worth reporting.
      if (err instanceof PlatformApiError && /message is not modified/i.test(err.message)) return;
      if (!part.entities?.length || !isEntityError(err)) throw err;
      await this.#call((api) => api.editMessageText(chatId, Number(id), part.text, opts)).catch((e: unknown) => {
        if (!(e instanceof PlatformApiError && /message is not modified/i.test(e.message))) throw e;
      });
    }
  }

  show(target: ReplyTarget, markdown: string, ids: readonly string[], mode: "live" | "final"): Promise<Shown> {
    const { replyTo } = this.#where(target);
    const io = {
      scope: `telegram|${target.ref}`,
      send: (p: Part, i: number) => this.#send(target, p, i === 0 ? replyTo : null),
      edit: (id: string, p: Part) => this.#edit(target, id, p),
    };
    return showMarkdown(io, markdown, TELEGRAM_RENDER, ids, mode);
  }

  async post(target: ReplyTarget, markdown: string): Promise<string[]> {
    return (await this.show(target, markdown, [], "final")).ids;
  }

  async typing(target: ReplyTarget): Promise<void> {
    const { chatId, thread } = this.#where(target);
    await this.#call((api) => api.sendChatAction(chatId, "typing", thread));
  }

  /** A new forum topic (forum supergroups, and private chats with topics enabled); null elsewhere. */
  async createHandoffThread(parentChatId: string, name: string): Promise<HandoffThread | null> {
    // The parent chat is read as a target is: a chat that is not a Telegram chat id is refused before any call.
    const { chatId } = telegramTargets.read(telegramTarget(parentChatId, null, null));
    try {
      const topic = await this.#call((api) => api.createForumTopic(chatId, name.slice(0, 128)));
      return { chatId: parentChatId, threadId: String(topic.message_thread_id) };
    } catch (err) {
      if (err instanceof PlatformApiError && (err.code === "rejected" || err.code === "not_found")) return null;
      throw err;
    }
  }

  /** A private chat's id is its user's id: nothing to open. */
  async directTarget(userId: string): Promise<DirectChat> {
    if (!/^\d+$/.test(userId)) throw new PlatformApiError("telegram", "rejected", `'${userId.slice(0, 40)}' is not a Telegram user id`);
    return { chatId: userId, ...(await this.destination(userId, null)), topics: true };
  }

  /** Private chats have positive ids, groups negative ones; a topic is its group plus thread. */
  async destination(chatId: string, threadId: string | null) {
    const isPrivate = !chatId.startsWith("-");
    return {
      source: { platform: "telegram" as const, chatType: isPrivate ? ("dm" as const) : ("group" as const), chatId, threadId },
      target: telegramTarget(chatId, threadId, null),
    };
  }

  async download(a: Attachment, opts: { maxBytes: number; signal?: AbortSignal }): Promise<Download> {
    return downloadTelegramFile((await this.#bot()).api, { apiRoot: this.#s.apiRoot, token: this.#s.token, fetch: this.#fetch }, a, opts);
  }

  wireChatType(source: SessionSource): string {
    return telegramWireChatType(source);
  }

  describeTarget(target: ReplyTarget): { chatId: string; threadId: string | null } {
    return telegramTargets.where(telegramTargets.read(target));
  }

  health(origin: string): Promise<PlatformHealth> {
    return telegramHealth({ token: this.#s.token, apiRoot: this.#s.apiRoot, fetch: this.#fetch }, origin, Date.now());
  }
}

function isEntityError(err: unknown): boolean {
  return err instanceof PlatformApiError && /can't parse entities|entity/i.test(err.message);
}
