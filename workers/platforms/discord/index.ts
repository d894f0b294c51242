import { joinUrl } from "../../agent/index.ts";
import { codeForStatus, PLATFORM_TIMEOUT_MS, PlatformApiError, type Capabilities, type HandoffThread, type InboundMessage, type Intake, type PlatformAdapter, type ReplyTarget, type SentMessage, type Verification } from "../types.ts";
import { deferredResponse, inlineResponse, parseDiscordInteraction } from "./parse.ts";
import { verifyDiscord } from "./verify.ts";

export { DISCORD_COMMANDS, parseDiscordInteraction } from "./parse.ts";
export { verifyDiscord } from "./verify.ts";

export interface DiscordSettings {
  applicationId: string;
  publicKey: string;
  /** Needed to post outside an interaction (handoff threads); interactions need none. */
  botToken?: string | undefined;
  apiBase: string;
  fetch?: typeof fetch;
}

export const DISCORD_CAPABILITIES: Capabilities = {
  maxMessageLength: 2000,
  lengthUnit: "utf16",
  threads: true,
  edits: true,
  typing: true,
  editIntervalMs: { private: 1000, group: 1000 },
};

/** Seed message text that anchors a handoff thread in the home channel. */
export const HANDOFF_SEED = "🔀 A session was handed off here from the CLI; the conversation continues in the thread below.";

/** Discord caps thread names at 100; we keep them to 80 with "..." when cut. */
export function threadName(name: string): string {
  const one = name.replace(/\s+/g, " ").trim() || "hermes session";
  return one.length <= 80 ? one : `${one.slice(0, 77)}...`;
}

/** A request path with any interaction token taken out (tokens must never reach the logs). */
export function redact(path: string): string {
  return path.replace(/(^|\/)webhooks\/(\d+)\/[^/?]+/, "$1webhooks/$2/…");
}

/** Discord over HTTP: interactions in, the interaction webhook and REST API out. */
export class DiscordAdapter implements PlatformAdapter {
  readonly name = "discord" as const;
  readonly capabilities = DISCORD_CAPABILITIES;
  readonly #s: DiscordSettings;
  readonly #fetch: typeof fetch;

  constructor(settings: DiscordSettings) {
    this.#s = settings;
    this.#fetch = settings.fetch ?? ((input, init) => fetch(input, init));
  }

  verify(headers: Headers, rawBody: Uint8Array, now: number): Promise<Verification> {
    return verifyDiscord(headers, rawBody, this.#s.publicKey, now);
  }

  async parse(rawBody: string): Promise<Intake> {
    return parseDiscordInteraction(rawBody);
  }

  /** Commands are answered within 3 s with "thinking…"; the reply then edits it. */
  acknowledge(_message: InboundMessage): Response {
    return deferredResponse();
  }

  respondInline(_message: InboundMessage, text: string): Response {
    return inlineResponse(text.length <= 2000 ? text : `${text.slice(0, 1997)}...`);
  }

  async #request<T>(method: string, path: string, body: unknown, auth: boolean): Promise<T> {
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (auth) {
      if (!this.#s.botToken) throw new PlatformApiError("discord", "not_configured", "DISCORD_BOT_TOKEN is not set");
      headers.authorization = `Bot ${this.#s.botToken}`;
    }
    let res: Response;
    try {
      res = await this.#fetch(joinUrl(this.#s.apiBase, path), { method, headers, signal: AbortSignal.timeout(PLATFORM_TIMEOUT_MS), ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
    } catch (err) {
      throw new PlatformApiError("discord", "network", `Discord unreachable: ${err instanceof Error ? err.message : String(err)}`);
    }
    if (res.status === 204) return undefined as T;
    const data = (await res.json().catch(() => ({}))) as { message?: string; retry_after?: number; code?: number };
    if (!res.ok) {
      const retryAfter = res.status === 429 ? (data.retry_after ?? Number(res.headers.get("retry-after") ?? "1")) : undefined;
      throw new PlatformApiError("discord", codeForStatus(res.status), `Discord ${method} ${redact(path)}: ${res.status} ${data.message ?? ""}`.trim(), {
        status: res.status,
        ...(retryAfter !== undefined ? { retryAfter } : {}),
      });
    }
    return data as T;
  }

  async send(target: ReplyTarget, text: string, part = 0): Promise<SentMessage> {
    const content = { content: text, allowed_mentions: { parse: [] } };
    if (target.interaction) {
      const hook = `webhooks/${target.interaction.applicationId}/${target.interaction.token}`;
      if (part === 0) {
        await this.#request("PATCH", `${hook}/messages/@original`, content, false);
        return { messageId: "@original" };
      }
      const msg = await this.#request<{ id: string }>("POST", `${hook}?wait=true`, content, false);
      return { messageId: msg.id };
    }
    const msg = await this.#request<{ id: string }>("POST", `channels/${target.threadId ?? target.chatId}/messages`, content, true);
    return { messageId: msg.id };
  }

  async edit(target: ReplyTarget, messageId: string, text: string): Promise<void> {
    const content = { content: text, allowed_mentions: { parse: [] } };
    if (target.interaction) {
      await this.#request("PATCH", `webhooks/${target.interaction.applicationId}/${target.interaction.token}/messages/${messageId}`, content, false);
      return;
    }
    await this.#request("PATCH", `channels/${target.threadId ?? target.chatId}/messages/${messageId}`, content, true);
  }

  /** An interaction already shows "thinking…"; elsewhere, the channel's typing indicator. */
  async typing(target: ReplyTarget): Promise<void> {
    if (target.interaction || !this.#s.botToken) return;
    await this.#request("POST", `channels/${target.threadId ?? target.chatId}/typing`, undefined, true);
  }

  /** A visible seed message in the home channel and a thread on it. */
  async createHandoffThread(parentChatId: string, name: string): Promise<HandoffThread | null> {
    if (!this.#s.botToken) return null;
    try {
      const seed = await this.#request<{ id: string }>("POST", `channels/${parentChatId}/messages`, { content: HANDOFF_SEED }, true);
      const thread = await this.#request<{ id: string }>("POST", `channels/${parentChatId}/messages/${seed.id}/threads`, { name: threadName(name), auto_archive_duration: 1440 }, true);
      // Messages in a thread are keyed on the thread itself (see discordSource).
      return { chatId: thread.id, threadId: thread.id };
    } catch (err) {
      if (err instanceof PlatformApiError && (err.code === "rejected" || err.code === "not_found")) return null;
      throw err;
    }
  }

  async sourceFor(chatId: string, threadId: string | null) {
    return {
      source: threadId
        ? { platform: "discord" as const, chatType: "thread" as const, chatId: threadId, threadId }
        : { platform: "discord" as const, chatType: "group" as const, chatId, threadId: null },
      target: { platform: "discord" as const, chatId: threadId ?? chatId, threadId, isPrivate: false },
    };
  }
}
