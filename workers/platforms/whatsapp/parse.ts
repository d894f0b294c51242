import type { z } from "zod";
import { checkJson } from "../boundary.ts";
import { isCommandName, type Attachment, type BatchNote, type DeliveryFailure, type Ingest, type PlatformEvent, type SessionSource } from "../types.ts";
import { WhatsAppEnvelope, WhatsAppMessage, WhatsAppStatus, WhatsAppValue, type WhatsAppMedia } from "./schema.ts";
import { whatsappTarget, whatsappTargets } from "./target.ts";

/** What a user is told once for a message the bot cannot read (a poll, an order, a type Meta added later). */
export const UNSUPPORTED_NOTE = "I can't read this kind of WhatsApp message. Send text, a photo, a document, a voice note or a location instead.";

/** Types that are no turn and need no answer: reactions, system notices, a user opening a fresh chat. */
const SILENT_TYPES = new Set(["reaction", "system", "request_welcome", "ephemeral"]);

const MEDIA_KINDS = { image: "image", document: "document", audio: "audio", video: "video", sticker: "image" } as const;
type MediaType = keyof typeof MEDIA_KINDS;

/** A DM: one session per user, keyed `agent:main:whatsapp:dm:<wa_id>` as Hermes keys WhatsApp. */
export function whatsappSource(waId: string, name: string | null): SessionSource {
  return { platform: "whatsapp", chatType: "dm", chatId: waId, userId: waId, userName: name };
}

function attachmentOf(type: MediaType, m: WhatsAppMedia): Attachment {
  const kind: Attachment["kind"] = type === "audio" && m.voice ? "voice" : MEDIA_KINDS[type];
  return { kind, name: m.filename ?? null, mime: m.mime_type ?? null, size: m.file_size ?? null, ref: m.id };
}

function located(l: NonNullable<WhatsAppMessage["location"]>): string {
  const where = [l.name, l.address].filter(Boolean).join(", ");
  return `📍 Shared a location${where ? `: ${where}` : ""} (latitude ${l.latitude}, longitude ${l.longitude})${l.url ? ` ${l.url}` : ""}`;
}

function contactCards(cards: NonNullable<WhatsAppMessage["contacts"]>): string {
  const lines = cards.map((c) => {
    const name = c.name?.formatted_name ?? ([c.name?.first_name, c.name?.last_name].filter(Boolean).join(" ") || "a contact");
    const phones = (c.phones ?? []).map((p) => p.phone).filter(Boolean);
    const emails = (c.emails ?? []).map((e) => e.email).filter(Boolean);
    const org = c.org?.company ? `, ${c.org.company}` : "";
    const reach = [...phones, ...emails].join(", ");
    return `- ${name}${org}${reach ? ` (${reach})` : ""}`;
  });
  return `👤 Shared ${cards.length === 1 ? "a contact" : `${cards.length} contacts`}:\n${lines.join("\n")}`;
}

/** The words of a message, and its files; null when it is a type the bot cannot read. */
function contentOf(m: WhatsAppMessage): { text: string; attachments: Attachment[] } | null {
  if (m.type === "text" && m.text) return { text: m.text.body, attachments: [] };
  if (m.type in MEDIA_KINDS) {
    const media = m[m.type as MediaType];
    if (!media) return null;
    return { text: media.caption ?? "", attachments: [attachmentOf(m.type as MediaType, media)] };
  }
  if (m.type === "location" && m.location) return { text: located(m.location), attachments: [] };
  if (m.type === "contacts" && m.contacts?.length) return { text: contactCards(m.contacts), attachments: [] };
  if (m.type === "interactive" && m.interactive) {
    const reply = m.interactive.button_reply ?? m.interactive.list_reply;
    if (reply) return { text: reply.title, attachments: [] };
  }
  if (m.type === "button" && m.button?.text) return { text: m.button.text, attachments: [] };
  return null;
}

/** `/stop`, `/resume abc`: commands are written as the first word of a text message. */
function textCommand(text: string): { name: string; args: string } | null {
  const m = /^\/([a-z]+)\b\s*(.*)$/is.exec(text.trim());
  return m ? { name: (m[1] ?? "").toLowerCase(), args: (m[2] ?? "").trim() } : null;
}

function eventOf(m: WhatsAppMessage, source: SessionSource, text: string, attachments: Attachment[]): PlatformEvent {
  const base = { deliveryId: m.id, messageId: m.id, source, target: whatsappTarget(source.chatId, m.id), addressed: true as const };
  const cmd = attachments.length === 0 ? textCommand(text) : null;
  if (cmd && isCommandName(cmd.name)) return { ...base, kind: "command", name: cmd.name, args: cmd.args };
  if (cmd && m.type === "text") return { ...base, kind: "unknown_command", name: cmd.name };
  return { ...base, kind: "message", text, attachments, bindsThread: false };
}

/** Why Meta did not deliver a message: its errors' codes and titles. */
function failureReason(s: WhatsAppStatus): string {
  return (s.errors ?? []).map((e) => `${e.code ?? "?"} ${e.title ?? e.message ?? ""}`.trim()).join("; ") || "no reason given";
}

interface Batch {
  events: PlatformEvent[];
  notes: BatchNote[];
  failures: DeliveryFailure[];
  log: string[];
  malformed?: string;
}

/** Where a part failed its schema and how, never its value (bodies carry personal data). */
function issueAt(what: string, error: z.ZodError): string {
  const issue = error.issues[0];
  return `unexpected ${what} at ${issue?.path.join(".") || "its top"}: ${issue?.code ?? "invalid"}`;
}

/** Reads one `messages` change into the batch. */
function readValue(value: WhatsAppValue, out: Batch): void {
  const names = new Map((value.contacts ?? []).flatMap((c) => (c.wa_id ? [[c.wa_id, c.profile?.name ?? null] as const] : [])));
  for (const raw of value.statuses ?? []) {
    const s = WhatsAppStatus.safeParse(raw);
    if (!s.success) out.malformed ??= issueAt("status", s.error);
    if (!s.success || s.data.status !== "failed") continue;
    const reason = failureReason(s.data);
    out.log.push(`message ${s.data.id} to ${s.data.recipient_id ?? "?"} failed: ${reason}`);
    const to = s.data.recipient_id;
    if (to && /^\d{1,32}$/.test(to)) out.failures.push({ source: whatsappSource(to, null), messageRef: s.data.id, reason });
  }
  for (const raw of value.messages ?? []) {
    const parsed = WhatsAppMessage.safeParse(raw);
    if (!parsed.success) {
      out.malformed ??= issueAt("message", parsed.error);
      continue;
    }
    const m = parsed.data;
    if (SILENT_TYPES.has(m.type)) continue;
    if (!m.from || !/^\d{1,32}$/.test(m.from)) continue;
    if (m.group_id) {
      out.log.push(`a group message (${m.type}) was skipped: groups are not served`);
      continue;
    }
    const source = whatsappSource(m.from, names.get(m.from) ?? null);
    const target = whatsappTarget(m.from, m.id);
    if (!whatsappTargets.decode(target)) {
      out.log.push(`a message id the target codec refuses was skipped`);
      continue;
    }
    const content = contentOf(m);
    if (!content) {
      out.notes.push({ deliveryId: m.id, source, target, text: UNSUPPORTED_NOTE });
      continue;
    }
    const prefix = m.context?.forwarded || m.context?.frequently_forwarded ? "(forwarded) " : m.context?.id ? "(a reply to an earlier message) " : "";
    const text = content.text === "" ? content.text : `${prefix}${content.text}`;
    if (text === "" && content.attachments.length === 0) continue;
    out.events.push(eventOf(m, source, text, content.attachments));
  }
}

/**
 * Parses a Cloud API webhook: every entry, change and message of it (Meta batches up to
 * 1000 updates). Changes of other fields (template status, account updates) and statuses
 * are no turns; a `failed` status is logged and kept in `failures` (the bot's message to
 * that user was not delivered). A change whose value fails the schema is skipped alone
 * (said in `malformed`), so one odd update never loses the others.
 */
export function parseWhatsAppBody(body: string): Ingest {
  const checked = checkJson(body, WhatsAppEnvelope);
  if (!checked.ok) return { kind: "ignore", reason: checked.reason, malformed: checked.reason };
  if (checked.value.object !== "whatsapp_business_account") return { kind: "ignore", reason: `object ${checked.value.object}` };
  const out: Batch = { events: [], notes: [], failures: [], log: [] };
  for (const entry of checked.value.entry) {
    for (const change of entry.changes) {
      if (change.field !== "messages") continue;
      const value = WhatsAppValue.safeParse(change.value);
      if (value.success) readValue(value.data, out);
      else out.malformed ??= issueAt("value", value.error);
    }
  }
  const { malformed, ...rest } = out;
  return { kind: "batch", ...rest, ...(malformed ? { malformed } : {}) };
}
