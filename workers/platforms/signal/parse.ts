import { checkJson, malformed } from "../boundary.ts";
import { isCommandName, type Attachment, type Ingest, type PlatformEvent, type SessionSource } from "../types.ts";
import { SignalBridged, SignalReceived, type SignalAttachment, type SignalDataMessage, type SignalEnvelope, type SignalMention } from "./schema.ts";
import { isSignalGroup, isSignalNumber, isSignalUser, signalTarget } from "./target.ts";

/** Who the bot is on Signal: its account's number, and its UUID where the gateway knows it. */
export interface SignalSelf {
  number: string | null;
  uuid: string | null;
}

/** signal-cli folds a received long-text attachment into `message`; the attachment itself is not a file. */
const LONG_TEXT = "text/x-signal-plain";
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const ignore = (reason: string): Ingest => ({ kind: "ignore", reason });

/** The envelope, the account and any decryption failure, whichever of the four shapes it came in. */
function unwrap(r: SignalReceived): { envelope: SignalEnvelope | null; account: string | null; failed: boolean } {
  const p = "jsonrpc" in r ? r.params : r;
  const failed = Boolean(p.exception ?? p.error ?? p.result?.exception ?? p.result?.error);
  return { envelope: p.result?.envelope ?? p.envelope ?? null, account: p.result?.account ?? p.account ?? null, failed };
}

/** The sender: the UUID (stable) as the user id, the number beside it where signal-cli shows one. */
function senderOf(e: SignalEnvelope): { id: string; number: string | null } | null {
  const legacy = e.source ?? null;
  // A placeholder (the man page's "uuid") is no UUID: the number keys such a sender.
  const uuid = [e.sourceUuid, legacy].find((v): v is string => !!v && UUID.test(v)) ?? null;
  const number = e.sourceNumber ?? (legacy && isSignalNumber(legacy) ? legacy : null);
  const id = uuid ? uuid.toLowerCase() : number;
  return id && isSignalUser(id) ? { id, number } : null;
}

const isSelf = (self: SignalSelf, number: string | null | undefined, uuid: string | null | undefined) =>
  Boolean((number && number === self.number) || (uuid && self.uuid && uuid.toLowerCase() === self.uuid.toLowerCase()));

/** The text with each mention's U+FFFC put back as `@name`; the bot's own mentions taken out. */
function withMentions(text: string, mentions: readonly SignalMention[], self: SignalSelf): { text: string; mentionsBot: boolean } {
  let out = "";
  let at = 0;
  let mentionsBot = false;
  for (const m of [...mentions].sort((a, b) => a.start - b.start)) {
    if (m.start < at || m.start + m.length > text.length) continue;
    out += text.slice(at, m.start);
    if (isSelf(self, m.number, m.uuid)) mentionsBot = true;
    else out += `@${m.name || m.number || m.uuid || "someone"}`;
    at = m.start + m.length;
  }
  return { text: (out + text.slice(at)).replace(/^\s+/, ""), mentionsBot };
}

function kindOf(a: SignalAttachment): Attachment["kind"] {
  const mime = a.contentType ?? "";
  if (mime.startsWith("image/")) return "image";
  if (mime.startsWith("audio/")) return a.voiceNote === false ? "audio" : "voice";
  if (mime.startsWith("video/")) return "video";
  return "document";
}

function attachmentsOf(d: SignalDataMessage, files: Record<string, string>): Attachment[] {
  return (d.attachments ?? []).flatMap((a) => {
    if (a.contentType === LONG_TEXT || !a.id) return [];
    // The gateway uploaded the file under this key; one it could not upload is described, not read.
    return [{ kind: kindOf(a), name: a.filename ?? null, mime: a.contentType ?? null, size: a.size ?? null, ref: files[a.id] ?? "" }];
  });
}

/**
 * One received item (a JSON-RPC notification or an SSE event's data, or what a bridging
 * gateway wrapped around one) → an event, without I/O. Never turns: own-device sync
 * messages, receipts, typing, calls, stories, edits, reactions, deletes, group updates,
 * undecryptable envelopes. A 1:1 chat is a DM keyed on the sender's UUID; in a group only
 * a message that mentions the bot or replies to it is for the bot.
 */
export function parseSignalBody(body: string, fallbackSelf: SignalSelf = { number: null, uuid: null }): Ingest {
  const outer = checkJson(body, SignalBridged);
  const wrapped = outer.ok && outer.value.received !== undefined ? outer.value : null;
  const checked = wrapped ? SignalReceived.safeParse(wrapped.received) : null;
  const received = checked
    ? checked.success
      ? { ok: true as const, value: checked.data }
      : { ok: false as const, reason: "unexpected payload" }
    : checkJson(body, SignalReceived);
  if (!received.ok) return malformed(received.reason);
  const { envelope: e, account, failed } = unwrap(received.value);
  if (failed) return ignore("undecryptable envelope");
  if (!e) return ignore("no envelope");
  const self: SignalSelf = { number: wrapped?.self?.number ?? account ?? fallbackSelf.number, uuid: wrapped?.self?.uuid ?? fallbackSelf.uuid };
  if (e.syncMessage) return ignore("own device sync message");
  if (e.receiptMessage) return ignore("receipt");
  if (e.typingMessage) return ignore("typing");
  if (e.editMessage) return ignore("edit");
  if (e.callMessage || e.storyMessage) return ignore("call or story");
  const d = e.dataMessage;
  if (!d) return ignore("no data message");
  const sender = senderOf(e);
  if (!sender) return malformed("no sender");
  if (isSelf(self, sender.number, sender.id)) return ignore("own message");
  if (d.groupInfo?.type === "UPDATE") return ignore("group update");
  if (d.reaction || d.remoteDelete || d.sticker || d.isExpirationUpdate) return ignore("reaction, delete, sticker or timer");
  const files = attachmentsOf(d, wrapped?.files ?? {});
  const { text, mentionsBot } = withMentions(d.message ?? "", d.mentions ?? [], self);
  if (text.trim() === "" && files.length === 0) return ignore("empty message");
  const timestamp = d.timestamp ?? e.timestamp;
  if (typeof timestamp !== "number") return malformed("no timestamp");
  const groupId = d.groupInfo?.groupId ?? null;
  if (groupId !== null && !isSignalGroup(groupId)) return malformed("bad group id");
  const chatId = groupId ?? sender.id;
  const source: SessionSource = {
    platform: "signal",
    chatType: groupId ? "group" : "dm",
    chatId,
    userId: sender.id,
    userName: e.sourceName ?? null,
    ...(sender.number && sender.number !== sender.id ? { userAltId: sender.number } : {}),
  };
  const q = d.quote;
  const repliesToBot = q ? isSelf(self, q.authorNumber ?? q.author, q.authorUuid ?? q.author) : false;
  const base = {
    deliveryId: `${sender.id}:${timestamp}`,
    messageId: String(timestamp),
    source,
    target: signalTarget(chatId, { timestamp: String(timestamp), author: sender.id }),
    addressed: groupId === null || mentionsBot || repliesToBot,
  };
  const cmd = files.length === 0 ? /^\/([a-z]+)\b\s*(.*)$/is.exec(text.trim()) : null;
  const name = (cmd?.[1] ?? "").toLowerCase();
  const event: PlatformEvent =
    cmd && isCommandName(name)
      ? { ...base, kind: "command", name, args: (cmd[2] ?? "").trim() }
      : cmd
        ? { ...base, kind: "unknown_command", name }
        : { ...base, kind: "message", text, attachments: files, bindsThread: false };
  return { kind: "event", event };
}
