/**
 * Turns a corpus entry into the delivery this Worker would get from its platform, with
 * the test's identities (the corpus README's caveats): a fresh delivery id (and message
 * id), the allowed test user as sender where the entry expects an answer, this bot's id
 * and name for the bot the payload assumes, file URLs on the fakes' hosts (whose files the
 * fakes then serve).
 */
import { corpusBody, type CorpusEntry } from "../support/corpus.ts";
import { pdfWithText, PNG } from "../support/files.ts";
import { DISCORD_TEST, SLACK_TEST, TELEGRAM_TEST } from "../support/signing.ts";
import { discordCdn, slackFiles, telegram, whatsapp, whatsappMedia } from "./fakes.ts";

/** Senders the Worker under test allows (vitest.config.ts). */
export const ALLOWED = { telegram: 1001, discord: "2001", slack: "U1001", whatsapp: "15550001001" } as const;

let seq = 0;
const fresh = () => ++seq;

type Json = Record<string, unknown>;
const isObj = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);
const copy = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;

/** What a file a payload names should contain, by what it says it is. */
function contentFor(name: string | null, mime: string | null, kind: string): { bytes: Uint8Array | string; mime: string } {
  if (kind === "photo" || mime?.startsWith("image/")) return { bytes: PNG, mime: "image/png" };
  if (mime === "application/pdf" || /\.pdf$/i.test(name ?? "")) return { bytes: pdfWithText("corpus PDF text"), mime: "application/pdf" };
  if (kind === "voice" || kind === "audio" || mime?.startsWith("audio/"))
    return { bytes: new Uint8Array([0x4f, 0x67, 0x67, 0x53, 0, 2]), mime: mime ?? "audio/ogg" };
  if (kind === "video" || kind === "video_note" || mime?.startsWith("video/"))
    return { bytes: new Uint8Array([0, 0, 0, 0x18, 0x66, 0x74, 0x79, 0x70]), mime: mime ?? "video/mp4" };
  return { bytes: `corpus file ${name ?? ""}\nsecond line`, mime: mime ?? "text/plain" };
}

/** Replaces `@from` (any case) by `@to` in a message's text or caption, moving its entities along. */
function renameMention(msg: Json, from: string, to: string): void {
  for (const [textKey, entKey] of [
    ["text", "entities"],
    ["caption", "caption_entities"],
  ] as const) {
    const text = msg[textKey];
    if (typeof text !== "string") continue;
    const entities = (Array.isArray(msg[entKey]) ? msg[entKey] : []) as Array<{ offset: number; length: number }>;
    const re = new RegExp(`@${from}`, "gi");
    let out = text;
    let shift = 0;
    for (const m of text.matchAll(re)) {
      const at = m.index + shift;
      out = out.slice(0, at) + `@${to}` + out.slice(at + m[0].length);
      const delta = to.length - from.length;
      for (const e of entities) {
        if (e.offset > at) e.offset += delta;
        else if (e.offset + e.length > at) e.length += delta;
      }
      shift += delta;
    }
    msg[textKey] = out;
  }
}

function telegramDelivery(entry: CorpusEntry): Json {
  const update = copy(entry.payload!) as Json;
  update.update_id = 900_000_000 + fresh();
  const botId = Number(entry.bot?.id ?? 7000000001);
  const botName = String(entry.bot?.username ?? "hermes_edge_bot");
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) return v.forEach(walk);
    if (!isObj(v)) return;
    // A sender whose id happens to be this test bot's would look like the bot itself.
    if (v.id === TELEGRAM_TEST.botId && botId !== TELEGRAM_TEST.botId) v.id = 1_000_555;
    else if (v.id === botId) v.id = TELEGRAM_TEST.botId;
    if (typeof v.username === "string" && v.username.toLowerCase() === botName.toLowerCase()) v.username = TELEGRAM_TEST.username;
    if ("text" in v || "caption" in v) renameMention(v, botName, TELEGRAM_TEST.username);
    Object.values(v).forEach(walk);
  };
  walk(update);
  const msg = update.message;
  if (isObj(msg)) {
    msg.message_id = fresh();
    // Each private chat of its own: other tests talk in the allowed users' own chats.
    if (isObj(msg.chat) && msg.chat.type === "private") msg.chat.id = 6_000_000 + fresh();
    if (entry.expect !== "refuse" && entry.expect !== "silence" && isObj(msg.from)) msg.from.id = ALLOWED.telegram;
    const files: Array<[string, unknown]> = [
      ["photo", Array.isArray(msg.photo) ? msg.photo : []],
      ...["voice", "audio", "document", "video", "video_note"].map((k): [string, unknown] => [k, msg[k] ? [msg[k]] : []]),
    ];
    for (const [kind, list] of files) {
      for (const f of list as Json[]) {
        const c = contentFor(typeof f.file_name === "string" ? f.file_name : null, typeof f.mime_type === "string" ? f.mime_type : null, kind);
        telegram.serveFile(String(f.file_id), c.bytes, c.mime, `${kind}s/${String(f.file_id)}`);
      }
    }
  }
  return update;
}

function discordDelivery(entry: CorpusEntry): Json {
  const i = copy(entry.payload!) as Json;
  if (typeof i.id === "string") i.id = String(8_000_000_000_000_000_000n + BigInt(fresh()));
  if (typeof i.application_id === "string") i.application_id = DISCORD_TEST.applicationId;
  const user = (isObj(i.member) && isObj(i.member.user) ? i.member.user : i.user) as Json | undefined;
  if (user && entry.expect !== "refuse") user.id = ALLOWED.discord;
  const data = isObj(i.data) ? i.data : {};
  const resolved = isObj(data.resolved) ? data.resolved : {};
  const attachments = [
    ...Object.values(isObj(resolved.attachments) ? resolved.attachments : {}),
    ...Object.values(isObj(resolved.messages) ? resolved.messages : {}).flatMap((m) => (isObj(m) && Array.isArray(m.attachments) ? m.attachments : [])),
  ];
  for (const a of attachments as Json[]) {
    if (typeof a.url !== "string") continue;
    const url = new URL(a.url);
    a.url = `https://cdn.discord.test${url.pathname}${url.search}`;
    const c = contentFor(typeof a.filename === "string" ? a.filename : null, typeof a.content_type === "string" ? a.content_type : null, "file");
    discordCdn.serve(`${url.pathname}${url.search}`, c.bytes, c.mime);
  }
  return i;
}

function slackDelivery(entry: CorpusEntry): { payload: Json | string; sender: string | null } {
  if (entry.form) {
    const form: Record<string, string> = { ...entry.form, trigger_id: `trig-corpus-${fresh()}`, response_url: "https://hooks.slack.test/commands/T0/1/corpus" };
    if (entry.expect !== "refuse") form.user_id = ALLOWED.slack;
    return { payload: new URLSearchParams(form).toString(), sender: form.user_id ?? null };
  }
  let text = corpusBody(entry).body;
  const bot = entry.bot?.user_id;
  const sender = (entry.payload!.event as Json | undefined)?.user;
  // Ids are replaced wherever they appear (mentions, authorizations, files' owners).
  if (typeof sender === "string" && entry.expect !== "refuse" && entry.expect !== "silence" && sender !== bot) text = text.replaceAll(sender, ALLOWED.slack);
  if (typeof bot === "string") text = text.replaceAll(bot, SLACK_TEST.botUserId);
  const env = JSON.parse(text) as Json;
  if (typeof env.event_id === "string") env.event_id = `EvCorpus${fresh()}`;
  const files = isObj(env.event) && Array.isArray(env.event.files) ? (env.event.files as Json[]) : [];
  for (const f of files) {
    for (const k of ["url_private", "url_private_download"]) {
      if (typeof f[k] !== "string") continue;
      const url = new URL(f[k]);
      f[k] = `https://files.slack.test${url.pathname}`;
      const c = contentFor(typeof f.name === "string" ? f.name : null, typeof f.mimetype === "string" ? f.mimetype : null, "file");
      slackFiles.serve(url.pathname, c.bytes, c.mime);
    }
  }
  return { payload: env, sender: isObj(env.event) && typeof env.event.user === "string" ? env.event.user : null };
}

/**
 * A Cloud API webhook: each message a fresh wamid, the allowed test user as its sender (but
 * in `refuse` files), and its media served: `GET /{media-id}` on the fake Graph API answers
 * a URL on the fake media host, which serves bytes of the type the payload says.
 */
function whatsappDelivery(entry: CorpusEntry): Json {
  const env = copy(entry.payload!) as Json;
  const sender = entry.expect === "refuse" ? null : ALLOWED.whatsapp;
  for (const e of (Array.isArray(env.entry) ? env.entry : []) as Json[]) {
    for (const c of (Array.isArray(e.changes) ? e.changes : []) as Json[]) {
      const v = isObj(c.value) ? c.value : {};
      const from = new Map<string, string>();
      for (const m of (Array.isArray(v.messages) ? v.messages : []) as Json[]) {
        m.id = `wamid.corpus${fresh()}`;
        if (sender && typeof m.from === "string") from.set(m.from, sender);
        if (sender && typeof m.from === "string") m.from = sender;
        for (const kind of ["image", "audio", "document", "video", "sticker"]) {
          const media = m[kind];
          if (!isObj(media) || typeof media.id !== "string") continue;
          const mime = typeof media.mime_type === "string" ? media.mime_type.split(";")[0]!.trim() : null;
          const c2 = contentFor(typeof media.filename === "string" ? media.filename : null, mime, kind);
          const path = `/corpus/${media.id}`;
          const url = `https://media.whatsapp.test${path}`;
          media.url = url;
          whatsappMedia.serve(path, c2.bytes, c2.mime);
          whatsapp.media.set(media.id, { url, mime_type: c2.mime });
        }
      }
      for (const ct of (Array.isArray(v.contacts) ? v.contacts : []) as Json[]) {
        const to = typeof ct.wa_id === "string" ? from.get(ct.wa_id) : undefined;
        if (to) ct.wa_id = to;
      }
    }
  }
  return env;
}

/** The delivery of an entry as its platform would send it here. */
export function corpusDelivery(entry: CorpusEntry): { body: string; contentType: string } {
  if (entry.platform === "telegram") return { body: JSON.stringify(telegramDelivery(entry)), contentType: "application/json" };
  if (entry.platform === "discord") return { body: JSON.stringify(discordDelivery(entry)), contentType: "application/json" };
  if (entry.platform === "whatsapp") return { body: JSON.stringify(whatsappDelivery(entry)), contentType: "application/json" };
  const { payload } = slackDelivery(entry);
  return typeof payload === "string"
    ? { body: payload, contentType: "application/x-www-form-urlencoded" }
    : { body: JSON.stringify(payload), contentType: "application/json" };
}
