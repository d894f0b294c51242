import { joinUrl } from "../../agent/index.ts";
import { renderParts, showMarkdown, type Part, type RenderSpec } from "../parts.ts";
import {
  codeForStatus,
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
  type Shown,
  type Verification,
  type DirectChat,
} from "../types.ts";
import { deferredResponse, ephemeral, parseDiscordInteraction } from "./parse.ts";
import { discordTarget, discordTargets } from "./target.ts";
import { applicationIdFromToken } from "./setup.ts";
import type { Download } from "../../attachments/index.ts";
import { downloadDiscordFile } from "./files.ts";
import { verifyDiscord } from "./verify.ts";
import { discordHealth } from "./health.ts";
import { discordThreadLink } from "./link.ts";
import { errorMessage } from "../../log/index.ts";
import { fetchWithin } from "../deadline.ts";

export { discordTarget } from "./target.ts";

export interface DiscordSettings {
  applicationId: string;
  publicKey: string;
  /** Needed to post outside an interaction (handoff threads); interactions need none. */
  botToken?: string | undefined;
  apiBase: string;
  /** `DISCORD_GATEWAY=on`: status also checks the application's Message Content Intent. */
  gateway?: boolean;
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

/** Replies are sent as Discord Markdown in `content`, with `allowed_mentions: {parse: []}` so nothing pings. */
export const DISCORD_RENDER: RenderSpec = { dialect: "discord", limit: DISCORD_CAPABILITIES.maxMessageLength, unit: DISCORD_CAPABILITIES.lengthUnit };

/** Seed message text that anchors a handoff thread in the home channel. */
export const HANDOFF_SEED = "🔀 A session was handed off here from the CLI; the conversation continues in the thread below.";

/** The id the deferred response of an interaction is edited as. */
const ORIGINAL = "@original";

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
  readonly targets = discordTargets;
  readonly commands: CommandStyle;
  readonly #s: DiscordSettings;
  readonly #fetch: typeof fetch;

  constructor(settings: DiscordSettings) {
    this.#s = settings;
    this.commands = {
      prefix: "/",
      howToTalk: settings.gateway
        ? "Write to the bot in a DM, mention it or reply to it in a channel, or just write in a handoff thread; /ask works too."
        : 'Use /ask to talk to the agent (in handoff threads too), or "Ask hermes" on any message.',
    };
    this.#fetch = settings.fetch ?? ((input, init) => fetch(input, init));
  }

  verify(headers: Headers, rawBody: Uint8Array, now: number): Promise<Verification> {
    return verifyDiscord(headers, rawBody, this.#s.publicKey, now);
  }

  ingest(body: string): Ingest {
    // Interactions carry their application id, but not every example of one does.
    return parseDiscordInteraction(body, { applicationId: this.#s.applicationId || applicationIdFromToken(this.#s.botToken ?? "") || "" });
  }

  /** Interactions are answered within 3 s with "thinking…" (ephemeral for commands); the reply then edits it. */
  ack(event: PlatformEvent): Response {
    return deferredResponse({ ephemeral: event.kind !== "message" });
  }

  /** One ephemeral message: the first part of the rendering (command answers are far shorter than a part). */
  answerInline(_event: PlatformEvent, text: string): Response {
    return ephemeral(renderParts(text, DISCORD_RENDER, "final")[0]?.text ?? "");
  }

  async #request<T>(method: string, path: string, body: unknown, auth: boolean): Promise<T> {
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (auth) {
      if (!this.#s.botToken) throw new PlatformApiError("discord", "not_configured", "DISCORD_BOT_TOKEN is not set");
      headers.authorization = `Bot ${this.#s.botToken}`;
    }
    let res: Response;
    try {
      res = await fetchWithin(this.#fetch, PLATFORM_TIMEOUT_MS, joinUrl(this.#s.apiBase, path), {
        method,
        headers,
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
    } catch (err) {
      throw new PlatformApiError("discord", "network", `Discord unreachable: ${errorMessage(err)}`);
    }
    if (res.status === 204) return undefined as T;
    const data = (await res.json().catch(() => ({}))) as { message?: string; retry_after?: number };
    if (!res.ok) {
      const retryAfter = res.status === 429 ? (data.retry_after ?? Number(res.headers.get("retry-after") ?? "1")) : undefined;
      throw new PlatformApiError("discord", codeForStatus(res.status), `Discord ${method} ${redact(path)}: ${res.status} ${data.message ?? ""}`.trim(), {
        status: res.status,
        ...(retryAfter !== undefined ? { retryAfter } : {}),
      });
    }
    return data as T;
  }

  #where(target: ReplyTarget) {
    const t = discordTargets.read(target);
    const hook = t.interaction ? `webhooks/${t.interaction.applicationId}/${t.interaction.token}` : null;
    return { channel: t.thread ?? t.channel ?? "", hook, replyTo: t.replyTo };
  }

  async #send(target: ReplyTarget, part: Part, first: boolean): Promise<string> {
    const { channel, hook, replyTo } = this.#where(target);
    // A Gateway message is answered as a reply to it (no ping: allowed_mentions stays empty).
    const reference = first && replyTo ? { message_reference: { message_id: replyTo, fail_if_not_exists: false } } : {};
    const content = { content: part.text, allowed_mentions: { parse: [] }, ...reference };
    if (hook) {
      // The interaction's deferred response is the reply's first message.
      if (first) {
        await this.#request("PATCH", `${hook}/messages/${ORIGINAL}`, content, false);
        return ORIGINAL;
      }
      return (await this.#request<{ id: string }>("POST", `${hook}?wait=true`, content, false)).id;
    }
    return (await this.#request<{ id: string }>("POST", `channels/${channel}/messages`, content, true)).id;
  }

  async #edit(target: ReplyTarget, id: string, part: Part): Promise<void> {
    const content = { content: part.text, allowed_mentions: { parse: [] } };
    const { channel, hook } = this.#where(target);
    if (hook) await this.#request("PATCH", `${hook}/messages/${id}`, content, false);
    else await this.#request("PATCH", `channels/${channel}/messages/${id}`, content, true);
  }

  show(target: ReplyTarget, markdown: string, ids: readonly string[], mode: "live" | "final"): Promise<Shown> {
    const io = {
      scope: `discord|${target.ref}`,
      send: (p: Part, i: number) => this.#send(target, p, i === 0 && ids.length === 0),
      edit: (id: string, p: Part) => this.#edit(target, id, p),
    };
    return showMarkdown(io, markdown, DISCORD_RENDER, ids, mode);
  }

  /** A new message; through an interaction, a follow-up (its deferred response may be edited already). */
  async post(target: ReplyTarget, markdown: string): Promise<string[]> {
    const parts = renderParts(markdown, DISCORD_RENDER, "final");
    const out: string[] = [];
    for (const p of parts) out.push(await this.#send(target, p, false));
    return out;
  }

  /** An interaction already shows "thinking…"; elsewhere, the channel's typing indicator. */
  async typing(target: ReplyTarget): Promise<void> {
    const { channel, hook } = this.#where(target);
    if (hook || !this.#s.botToken) return;
    await this.#request("POST", `channels/${channel}/typing`, undefined, true);
  }

  /** A visible seed message in the home channel and a thread on it. */
  async createHandoffThread(parentChatId: string, name: string): Promise<HandoffThread | null> {
    if (!this.#s.botToken) return null;
    try {
      const seed = await this.#request<{ id: string }>("POST", `channels/${parentChatId}/messages`, { content: HANDOFF_SEED }, true);
      const thread = await this.#request<{ id: string; guild_id?: string }>(
        "POST",
        `channels/${parentChatId}/messages/${seed.id}/threads`,
        { name: threadName(name), auto_archive_duration: 1440 },
        true,
      );
      // Messages in a thread are keyed on the thread itself (see discordSource).
      return { chatId: thread.id, threadId: thread.id, url: discordThreadLink(thread.guild_id, thread.id) };
    } catch (err) {
      if (err instanceof PlatformApiError && (err.code === "rejected" || err.code === "not_found")) return null;
      throw err;
    }
  }

  /** The DM channel with a user (opened, or found again: Discord answers the same channel). */
  async directTarget(userId: string): Promise<DirectChat> {
    const channel = await this.#request<{ id: string }>("POST", "users/@me/channels", { recipient_id: userId }, true);
    const chatId = String(channel.id);
    return { chatId, source: { platform: "discord", chatType: "dm", chatId, threadId: null }, target: discordTarget(chatId, null, true), topics: false };
  }

  async destination(chatId: string, threadId: string | null) {
    return {
      source: threadId
        ? { platform: "discord" as const, chatType: "thread" as const, chatId: threadId, threadId }
        : { platform: "discord" as const, chatType: "group" as const, chatId, threadId: null },
      target: discordTarget(threadId ?? chatId, threadId, false),
    };
  }

  download(a: Attachment, opts: { maxBytes: number; signal?: AbortSignal }): Promise<Download> {
    return downloadDiscordFile(this.#fetch, a, opts);
  }

  describeTarget(target: ReplyTarget): { chatId: string; threadId: string | null } {
    return discordTargets.where(discordTargets.read(target));
  }

  health(origin: string): Promise<PlatformHealth> {
    return discordHealth({ botToken: this.#s.botToken, apiBase: this.#s.apiBase, fetch: this.#fetch, gateway: this.#s.gateway === true }, origin);
  }
}
