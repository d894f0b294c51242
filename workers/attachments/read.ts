import { decodeText, describe, formatBytes, isPdf, looksTextual, sniffImage } from "./kinds.ts";
import { pdfText } from "./pdf.ts";
import type { AttachmentIn, AttachmentRecord, Download, ImagePart, TurnAttachments } from "./types.ts";
import { errorMessage } from "../log/index.ts";

/** Characters of documents inlined into one message, all its documents together (about 6k tokens). */
export const INLINE_TEXT_CHARS = 24_000;

/** How one host reads attachments: its downloads, where it keeps bytes, its speech-to-text. */
export interface ReadDeps {
  maxBytes: number;
  /** Fetches the bytes with the platform's credentials (or the relay's link), at most `maxBytes`. */
  download(a: AttachmentIn, signal: AbortSignal): Promise<Download>;
  /** Keeps the bytes (R2 at the edge); their key, or null when they are not kept. */
  keep?(a: AttachmentIn, index: number, bytes: Uint8Array, mime: string | null): Promise<string | null>;
  /** Speech to text; absent: voice notes cannot be heard here. */
  transcribe?(audio: { bytes: Uint8Array; mime: string | null; name: string | null }, signal: AbortSignal): Promise<string>;
  /** A PDF's text layer (default: pdf.js); null when it has none. */
  pdfText?(bytes: Uint8Array): Promise<string | null>;
  log?(line: string): void;
}

/** Bytes as base64, in chunks (a spread of megabytes would overflow the call stack). */
export function base64(bytes: Uint8Array): string {
  let out = "";
  for (let i = 0; i < bytes.length; i += 0x8000) out += btoa(String.fromCharCode(...bytes.subarray(i, i + 0x8000)));
  return out;
}

/** A fenced block no backtick run inside the text can close early. */
function fenced(text: string): string {
  const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = "`".repeat(longest + 1);
  return `${fence}\n${text}\n${fence}`;
}

const why = (err: unknown) => errorMessage(err);

interface Reading {
  status: AttachmentRecord["status"];
  note: string;
  detail?: string;
  image?: ImagePart;
}

/**
 * Reads a message's attachments for the agent, one after another: images become image
 * parts (their type checked on the bytes), text documents and PDFs with a text layer are
 * inlined (together at most {@link INLINE_TEXT_CHARS}), voice notes and audio are
 * transcribed where speech-to-text is configured, everything else is described by name,
 * type and size. Files over `maxBytes` are described without being fetched. Never throws:
 * a file that cannot be fetched or read is said to be so in its note, and the rest go on.
 */
export async function readAttachments(items: readonly AttachmentIn[], deps: ReadDeps, signal: AbortSignal): Promise<TurnAttachments> {
  const records: AttachmentRecord[] = [];
  const images: ImagePart[] = [];
  let budget = INLINE_TEXT_CHARS;
  for (const [index, a] of items.entries()) {
    const base = { index, kind: a.kind, name: a.name, seconds: a.seconds ?? null };
    const record = (r: Reading, size: number | null, key: string | null = null, mime = a.mime) => {
      records.push({ ...base, mime, size, status: r.status, key, detail: r.detail ?? null, note: r.note });
      if (r.image) images.push(r.image);
    };
    if (a.size !== null && a.size > deps.maxBytes) {
      record({ status: "too_large", note: `[${describe(a)}: larger than the ${formatBytes(deps.maxBytes)} this agent fetches, so it was not read]` }, a.size);
      continue;
    }
    const got = a.unavailable ? ({ ok: false, reason: "failed", detail: a.unavailable } as const) : signal.aborted ? ({ ok: false, reason: "failed", detail: "the turn was stopped" } as const) : await deps.download(a, signal).catch((err: unknown): Download => ({ ok: false, reason: "failed", detail: why(err) }));
    if (!got.ok) {
      const note = got.reason === "too_large" ? `[${describe(a)}: larger than the ${formatBytes(deps.maxBytes)} this agent fetches, so it was not read]` : `[${describe(a)}: it could not be fetched (${got.detail}), so its content is not known]`;
      record({ status: got.reason === "too_large" ? "too_large" : "failed", note, detail: got.detail }, a.size);
      continue;
    }
    // An image is the type its bytes are; otherwise the server's word, else the sender's.
    const mime = sniffImage(got.bytes) ?? got.mime ?? a.mime;
    const key = deps.keep ? await deps.keep(a, index, got.bytes, mime).catch((err: unknown) => (deps.log?.(`attachment ${index} not kept: ${why(err)}`), null)) : null;
    const reading = await read({ ...a, mime }, got.bytes, deps, signal, budget);
    if (reading.status === "inlined") budget -= reading.note.length;
    record(reading, got.bytes.length, key, mime);
  }
  return { text: records.map((r) => r.note).join("\n"), images, records };
}

async function read(a: AttachmentIn, bytes: Uint8Array, deps: ReadDeps, signal: AbortSignal, budget: number): Promise<Reading> {
  const what = describe(a, bytes.length);
  const image = sniffImage(bytes);
  if (image) return { status: "image", note: `[${what}: the image is attached]`, image: { type: "image_url", image_url: { url: `data:${image};base64,${base64(bytes)}` } } };
  if (a.kind === "image") return { status: "described", note: `[${what}: an image in a format the model cannot be shown]` };
  if (a.kind === "voice" || a.kind === "audio" || a.mime?.startsWith("audio/")) return hear(a, bytes, what, deps, signal);
  if (a.kind === "video") return { status: "described", note: `[${what}: a video, which this agent cannot watch]` };
  let text: string | null = null;
  if (isPdf(bytes)) {
    text = await (deps.pdfText ?? pdfText)(bytes).catch((err: unknown) => (deps.log?.(`PDF text not extracted: ${why(err)}`), null));
    if (text === null) return { status: "described", note: `[${what}: a PDF without text that could be extracted (scanned pages, say)]` };
  } else if (looksTextual(a.mime, a.name)) {
    text = decodeText(bytes);
    if (text === null) return { status: "described", note: `[${what}: named as text, but its bytes are not UTF-8 text]` };
  } else {
    return { status: "described", note: `[${what}: a file this agent cannot open; only its name, type and size are known]` };
  }
  if (budget <= 0) return { status: "described", note: `[${what}: not included, the message's other documents already fill what is inlined]` };
  const cut = text.length > budget;
  const shown = cut ? `${text.slice(0, budget)}\n[… cut here: ${text.length - budget} more characters were not included]` : text;
  return { status: "inlined", note: `[${what}, its text:]\n${fenced(shown)}` };
}

async function hear(a: AttachmentIn, bytes: Uint8Array, what: string, deps: ReadDeps, signal: AbortSignal): Promise<Reading> {
  if (!deps.transcribe) {
    return { status: "unheard", note: `[${what}: this agent cannot hear audio (no speech-to-text is configured), so it does not know what was said; it should tell the sender and ask them to type it]` };
  }
  try {
    const text = await deps.transcribe({ bytes, mime: a.mime, name: a.name }, signal);
    return { status: "transcribed", note: text ? `[${what}, transcribed: "${text}"]` : `[${what}, transcribed: no speech was recognised]` };
  } catch (err) {
    return { status: "failed", note: `[${what}: it could not be transcribed (${why(err)}), so what was said is not known]`, detail: why(err) };
  }
}
