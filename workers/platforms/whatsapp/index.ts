import type { Download } from "../../attachments/index.ts";
import { renderParts, type Part, type RenderSpec } from "../parts.ts";
import type {
  Attachment,
  Capabilities,
  CommandStyle,
  HandoffThread,
  Ingest,
  PlatformAdapter,
  PlatformEvent,
  PlatformHealth,
  ReplyTarget,
  Shown,
  Verification,
  DirectChat,
} from "../types.ts";
import { graph, type GraphSettings } from "./api.ts";
import { downloadWhatsAppMedia } from "./files.ts";
import { whatsappHealth } from "./health.ts";
import { parseWhatsAppBody } from "./parse.ts";
import { postedLength, tagPosted } from "./posted.ts";
import { whatsappTarget, whatsappTargets } from "./target.ts";
import { verifyWhatsApp, whatsappHandshake } from "./verify.ts";
import { handoffWindow } from "./window.ts";

export { parseWhatsAppBody, UNSUPPORTED_NOTE } from "./parse.ts";
export { whatsappTarget } from "./target.ts";
export { verifyWhatsApp, whatsappHandshake } from "./verify.ts";
export { OUTSIDE_WINDOW, WINDOW_MS } from "./window.ts";

/** Settings the WhatsApp adapter runs on. */
export interface WhatsAppSettings {
  accessToken: string;
  appSecret: string;
  verifyToken: string;
  phoneNumberId: string;
  apiBase: string;
  /** WHATSAPP_HANDOFF_TEMPLATE: sent for a handoff outside the 24-hour window (null: such a handoff fails). */
  handoffTemplate?: string | null;
  fetch?: typeof fetch;
  /** The clock of the typing refresh and the 24-hour window (tests inject one). */
  now?: () => number;
}

/** WhatsApp cannot edit a sent message: a reply is posted paragraph by paragraph as it completes, not edited. */
export const WHATSAPP_CAPABILITIES: Capabilities = {
  maxMessageLength: 4096,
  lengthUnit: "utf16",
  threads: false,
  edits: false,
  typing: true,
  // Between two posts of completed paragraphs: a natural pace, not a message per token.
  editIntervalMs: { private: 2500, group: 2500 },
};

export const WHATSAPP_RENDER: RenderSpec = { dialect: "whatsapp", limit: WHATSAPP_CAPABILITIES.maxMessageLength, unit: WHATSAPP_CAPABILITIES.lengthUnit };

/** The typing indicator lasts 25 s (or until the reply): sent again only after this long. */
export const TYPING_RESEND_MS = 20_000;

/** When each answered message last had its typing indicator sent (per isolate, bounded). */
const typingSent = new Map<string, number>();

/** WhatsApp through Meta's Cloud API: signed webhooks in, `POST /{phone-number-id}/messages` out. */
export class WhatsAppAdapter implements PlatformAdapter {
  readonly name = "whatsapp" as const;
  readonly capabilities = WHATSAPP_CAPABILITIES;
  readonly targets = whatsappTargets;
  readonly commands: CommandStyle = { prefix: "/", howToTalk: "Send a message to talk to the agent." };
  readonly #s: WhatsAppSettings;
  readonly #g: GraphSettings;
  readonly #now: () => number;

  /** Does no I/O. */
  constructor(settings: WhatsAppSettings) {
    this.#s = settings;
    this.#g = { apiBase: settings.apiBase, accessToken: settings.accessToken, fetch: settings.fetch ?? ((input, init) => fetch(input, init)) };
    this.#now = settings.now ?? Date.now;
  }

  handshake(query: URLSearchParams): Promise<Response> {
    return whatsappHandshake(query, this.#s.verifyToken);
  }

  verify(headers: Headers, rawBody: Uint8Array): Promise<Verification> {
    return verifyWhatsApp(headers, rawBody, this.#s.appSecret);
  }

  ingest(body: string): Ingest {
    return parseWhatsAppBody(body);
  }

  ack(_event: PlatformEvent): Response {
    return new Response(null, { status: 200 });
  }

  answerInline(): Response | null {
    return null;
  }

  /** Sends one message; the first part of a reply quotes the message it answers. */
  async #send(target: ReplyTarget, part: Part, quote: boolean): Promise<string> {
    const t = whatsappTargets.read(target);
    const body = {
      messaging_product: "whatsapp",
      recipient_type: "individual",
      to: t.waId,
      type: "text",
      text: { body: part.text, preview_url: false },
      ...(quote && t.replyTo ? { context: { message_id: t.replyTo } } : {}),
    };
    // Sending ends the typing indicator: the next refresh may show it again at once.
    if (t.replyTo) typingSent.delete(t.replyTo);
    const r = await graph<{ messages?: Array<{ id?: unknown }> }>(
      this.#g,
      "POST",
      `${encodeURIComponent(this.#s.phoneNumberId)}/messages`,
      body,
      "send message",
    );
    const id = r.messages?.[0]?.id;
    return typeof id === "string" ? id : "";
  }

  /**
   * Posts what `ids` do not show yet (a message cannot be edited on WhatsApp): the reply
   * streamer shows the completed paragraphs as they come, the final delivery the rest. Each
   * id records how much of the reply was posted with it (see ./posted.ts).
   */
  async show(target: ReplyTarget, markdown: string, ids: readonly string[], _mode: "live" | "final"): Promise<Shown> {
    const rest = markdown.slice(postedLength(ids, markdown)).trim();
    const out = [...ids];
    if (rest === "") return { ids: out, complete: true };
    const parts = renderParts(rest, WHATSAPP_RENDER, "final");
    const sent: string[] = [];
    for (const part of parts) sent.push(await this.#send(target, part, out.length + sent.length === 0));
    return { ids: [...out, ...sent.map((id) => tagPosted(id, markdown, markdown.length))], complete: true };
  }

  async post(target: ReplyTarget, markdown: string): Promise<string[]> {
    return (await this.show(target, markdown, [], "final")).ids;
  }

  /** Marks the answered message read and shows "typing…" (25 s or until the reply), at most every {@link TYPING_RESEND_MS}. */
  async typing(target: ReplyTarget): Promise<void> {
    const t = whatsappTargets.read(target);
    if (!t.replyTo) return;
    const now = this.#now();
    const last = typingSent.get(t.replyTo);
    if (last !== undefined && now - last < TYPING_RESEND_MS) return;
    typingSent.set(t.replyTo, now);
    const oldest = typingSent.size > 1024 ? typingSent.keys().next().value : undefined;
    if (oldest !== undefined) typingSent.delete(oldest);
    const body = { messaging_product: "whatsapp", status: "read", message_id: t.replyTo, typing_indicator: { type: "text" } };
    await graph(this.#g, "POST", `${encodeURIComponent(this.#s.phoneNumberId)}/messages`, body, "typing indicator");
  }

  /** The 24-hour rule: inside it as elsewhere; outside it the handoff template, or a refusal with the reason. */
  handoffGate(chatId: string, title: string, lastInboundAt: number | null) {
    const waId = whatsappTargets.read(whatsappTarget(chatId, null)).waId;
    return handoffWindow(
      this.#g,
      { phoneNumberId: this.#s.phoneNumberId, template: this.#s.handoffTemplate ?? null, now: this.#now() },
      waId,
      title,
      lastInboundAt,
    );
  }

  /** WhatsApp has no threads: the destination chat itself takes the session. */
  async createHandoffThread(_parentChatId: string, _name: string): Promise<HandoffThread | null> {
    return null;
  }

  /** A user's chat is their WhatsApp id (wa_id): nothing to open (the 24-hour window is handoffGate's). */
  async directTarget(userId: string): Promise<DirectChat> {
    return { chatId: userId, ...(await this.destination(userId, null)), topics: false };
  }

  async destination(chatId: string, _threadId: string | null) {
    whatsappTargets.read(whatsappTarget(chatId, null));
    return { source: { platform: "whatsapp" as const, chatType: "dm" as const, chatId, threadId: null }, target: whatsappTarget(chatId, null) };
  }

  download(a: Attachment, opts: { maxBytes: number; signal?: AbortSignal }): Promise<Download> {
    return downloadWhatsAppMedia(this.#g, a, opts);
  }

  describeTarget(target: ReplyTarget): { chatId: string; threadId: string | null } {
    return whatsappTargets.where(whatsappTargets.read(target));
  }

  health(origin: string): Promise<PlatformHealth> {
    return whatsappHealth(this.#g, this.#s.phoneNumberId, origin);
  }
}
