import type { z } from "zod";
import { checkJson } from "../boundary.ts";
import { isCommandName, type BatchNote, type Ingest, type PlatformEvent, type SessionSource } from "../types.ts";
import { isEventId, isRoomId, isUserId } from "./ids.ts";
import { contentOf, mentionsBot, repliesToBot, stripReplyFallback, withoutMention } from "./message.ts";
import { MatrixEvent, MatrixTransaction, MemberContent, MessageContent } from "./schema.ts";
import { matrixTarget } from "./target.ts";

/** What a user is told, once per room, where the bot cannot read anything. */
export const ENCRYPTED_NOTE =
  "This room is end-to-end encrypted, and I can't read encrypted messages (this bot has no encryption support yet). Talk to me in an unencrypted room or DM.";

/** What parsing knows of rooms: how many members each has joined (null: not known yet; then it is a group). */
export type MemberCount = (roomId: string) => number | null;

/** A room of at most this many joined members (the user and the bot) is a DM. */
export const DM_MEMBERS = 2;

/** An invite of the bot into a room, to accept or decline. */
export interface Invite {
  roomId: string;
  sender: string;
  eventId: string;
}

type Batch = Extract<Ingest, { kind: "batch" }>;

/** A room message's source, as Hermes keys Matrix: the room is the chat, `dm` or `group`; a thread's root event is the thread. */
export function matrixSource(roomId: string, threadRoot: string | null, userId: string, direct: boolean): SessionSource {
  return { platform: "matrix", chatType: direct ? "dm" : "group", chatId: roomId, threadId: threadRoot, userId, userHandle: userId };
}

/** `/status`, `!status`: a known name with either prefix is a command; an unknown one only with `/` (`!` starts ordinary words too). */
function commandOf(text: string): { name: string; args: string; known: boolean } | null {
  const m = /^([/!])([a-z]+)\b\s*([\s\S]*)$/i.exec(text.trim());
  if (!m) return null;
  const name = (m[2] ?? "").toLowerCase();
  const known = isCommandName(name);
  return known || m[1] === "/" ? { name, args: (m[3] ?? "").trim(), known } : null;
}

function issueAt(what: string, err: z.ZodError): string {
  const issue = err.issues[0];
  return `unexpected ${what} at ${issue?.path.join(".") || "event"}: ${issue?.code ?? "invalid"}`;
}

/** The events of a transaction that passed the envelope check, each checked alone. */
export function transactionEvents(body: string): { events: MatrixEvent[]; malformed?: string } | { refused: string } {
  const checked = checkJson(body, MatrixTransaction);
  if (!checked.ok) return { refused: checked.reason };
  const events: MatrixEvent[] = [];
  let malformed: string | undefined;
  for (const raw of checked.value.events ?? []) {
    const e = MatrixEvent.safeParse(raw);
    if (e.success) events.push(e.data);
    else malformed ??= issueAt("event", e.error);
  }
  return malformed ? { events, malformed } : { events };
}

/** Invites of `bot` in these events (membership `invite`, `state_key` the bot). */
export function invitesOf(events: readonly MatrixEvent[], bot: string): Invite[] {
  return events.flatMap((e) => {
    if (e.type !== "m.room.member" || e.state_key !== bot || !e.room_id || !e.sender || !e.event_id) return [];
    const c = MemberContent.safeParse(e.content ?? {});
    return c.success && c.data.membership === "invite" && isRoomId(e.room_id) ? [{ roomId: e.room_id, sender: e.sender, eventId: e.event_id }] : [];
  });
}

/** Rooms whose messages need a member count (DM or group), and rooms whose membership changed. */
export function roomsOf(events: readonly MatrixEvent[]): { messages: Set<string>; membership: Set<string> } {
  const messages = new Set<string>();
  const membership = new Set<string>();
  for (const e of events) {
    if (!e.room_id || !isRoomId(e.room_id)) continue;
    if (e.type === "m.room.member" && e.state_key !== undefined) membership.add(e.room_id);
    else if (e.state_key === undefined && (e.type === "m.room.message" || e.type === "m.room.encrypted")) messages.add(e.room_id);
  }
  return { messages, membership };
}

/** One room message as an event, or why it is no turn. */
function messageEvent(e: MatrixEvent, bot: string, members: MemberCount): PlatformEvent | string {
  const { room_id: roomId, sender, event_id: eventId } = e;
  if (!roomId || !sender || !eventId || !isRoomId(roomId) || !isEventId(eventId) || !isUserId(sender)) return "a message without valid ids";
  if (sender.toLowerCase() === bot.toLowerCase()) return "the bot's own message";
  const parsed = MessageContent.safeParse(e.content ?? {});
  if (!parsed.success) return "a message content that does not parse";
  const c = parsed.data;
  const rel = c["m.relates_to"];
  if (rel?.rel_type === "m.replace") return "an edit (not a new turn)";
  if (c.msgtype === "m.notice") return "a notice (bots' messages)";
  if (c.file !== undefined && c.url === undefined) return "an encrypted attachment";
  const thread = rel?.rel_type === "m.thread" && rel.event_id && isEventId(rel.event_id) ? rel.event_id : null;
  // In a thread the `m.in_reply_to` of a plain message is only the client's fallback for older clients.
  const inReplyTo = rel?.["m.in_reply_to"]?.event_id ?? null;
  const isReply = inReplyTo !== null && !(thread !== null && rel?.is_falling_back === true);
  const rawHtml = c.format === "org.matrix.custom.html" && c.formatted_body !== undefined ? c.formatted_body : null;
  const { body, html, quoted } = isReply ? stripReplyFallback(c.body ?? "", rawHtml) : { body: c.body ?? "", html: rawHtml, quoted: null };
  const count = members(roomId);
  const direct = count !== null && count <= DM_MEMBERS;
  const mentioned = mentionsBot(c, html, body, bot) || (isReply && repliesToBot(quoted, rawHtml, bot));
  const text = mentioned ? withoutMention(body, html, bot) : body;
  const content = contentOf(c, text);
  if (content === null) return `a message of type ${c.msgtype ?? "(none)"} the bot does not read`;
  const cmd = content.attachments.length === 0 ? commandOf(content.text) : null;
  const base = {
    deliveryId: eventId,
    messageId: eventId,
    source: matrixSource(roomId, thread, sender, direct),
    target: matrixTarget(roomId, thread, eventId, direct),
    // In a shared room only mentions, replies to the bot and its own commands are for it; in a thread the thread's Inbox decides.
    addressed: direct || mentioned || cmd?.known === true,
  };
  if (cmd?.known && isCommandName(cmd.name)) return { ...base, kind: "command", name: cmd.name, args: cmd.args };
  if (cmd && (direct || mentioned)) return { ...base, kind: "unknown_command", name: cmd.name };
  return { ...base, kind: "message", text: content.text, attachments: content.attachments, bindsThread: false };
}

/** The note for an encrypted message, once per room (its delivery id names the room). */
function encryptedNote(e: MatrixEvent, bot: string, members: MemberCount): BatchNote | string {
  const { room_id: roomId, sender } = e;
  if (!roomId || !sender || !isRoomId(roomId) || !isUserId(sender)) return "an encrypted event without valid ids";
  if (sender.toLowerCase() === bot.toLowerCase()) return "the bot's own event";
  const count = members(roomId);
  const direct = count !== null && count <= DM_MEMBERS;
  return {
    deliveryId: `encrypted:${roomId}`,
    source: matrixSource(roomId, null, sender, direct),
    target: matrixTarget(roomId, null, null, direct),
    text: ENCRYPTED_NOTE,
  };
}

/**
 * A transaction's events as a batch (no I/O): room messages become events, encrypted ones a
 * note (once per room), and everything else (state events, which have a `state_key`, edits,
 * reactions, redactions, receipts, typing, unknown types) is no turn. `members` says which
 * rooms are DMs; a room it does not know is a group.
 */
export function parseMatrixTransaction(body: string, bot: string, members: MemberCount): Ingest {
  const got = transactionEvents(body);
  if ("refused" in got) return { kind: "ignore", reason: got.refused, malformed: got.refused };
  const out: Batch = { kind: "batch", events: [], notes: [], failures: [], log: [] };
  const notedRooms = new Set<string>();
  for (const e of got.events) {
    if (e.state_key !== undefined) continue;
    if (e.type === "m.room.message") {
      const made = messageEvent(e, bot, members);
      if (typeof made !== "string") out.events.push(made);
    } else if (e.type === "m.room.encrypted") {
      const note = encryptedNote(e, bot, members);
      if (typeof note !== "string" && !notedRooms.has(note.source.chatId)) {
        notedRooms.add(note.source.chatId);
        out.notes.push(note);
      }
    }
  }
  return got.malformed ? { ...out, malformed: got.malformed } : out;
}
