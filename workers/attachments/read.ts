import { decodeText, describe, formatBytes, isPdf, looksTextual, sniffImage } from "./kinds.ts";
import { pdfText, PDF_LIMITS, type PdfReading, type PdfReadOptions } from "./pdf.ts";
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
  /** A PDF's text layer, bounded (default: pdf.js with {@link PDF_LIMITS}). */
  pdfText?(bytes: Uint8Array, o: PdfReadOptions): Promise<PdfReading>;
  /**
   * Durable marks of the attachment being read (kept where a restart cannot lose them): one
   * still marked when a turn runs again stopped the previous attempt, so it is described
   * instead of read again.
   */
  marks?: ReadMarks;
  log?(line: string): void;
}

/** Marks of attachments being read, by their index in the turn. */
export interface ReadMarks {
  has(index: number): Promise<boolean>;
  set(index: number): Promise<void>;
  clear(index: number): Promise<void>;
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
    if (await deps.marks?.has(index).catch(() => false)) {
      record(
        {
          status: "described",
          note: `[${describe(a)}: not read: reading it stopped the previous attempt at this turn]`,
          detail: "reading it stopped the previous attempt",
        },
        a.size,
      );
      continue;
    }
    const got = a.unavailable
      ? ({ ok: false, reason: "failed", detail: a.unavailable } as const)
      : signal.aborted
        ? ({ ok: false, reason: "failed", detail: "the turn was stopped" } as const)
        : await deps.download(a, signal).catch((err: unknown): Download => ({ ok: false, reason: "failed", detail: why(err) }));
    if (!got.ok) {
      const note =
        got.reason === "too_large"
          ? `[${describe(a)}: larger than the ${formatBytes(deps.maxBytes)} this agent fetches, so it was not read]`
          : `[${describe(a)}: it could not be fetched (${got.detail}), so its content is not known]`;
      record({ status: got.reason === "too_large" ? "too_large" : "failed", note, detail: got.detail }, a.size);
      continue;
    }
    // An image is the type its bytes are; otherwise the server's word, else the sender's.
    const mime = sniffImage(got.bytes) ?? got.mime ?? a.mime;
    const key = deps.keep
      ? await deps.keep(a, index, got.bytes, mime).catch((err: unknown) => (deps.log?.(`attachment ${index} not kept: ${why(err)}`), null))
      : null;
    const reading = await markedWhile(deps, index, isPdf(got.bytes), () => read({ ...a, mime }, got.bytes, deps, signal, budget));
    if (reading.status === "inlined") budget -= reading.note.length;
    record(reading, got.bytes.length, key, mime);
  }
  return { text: records.map((r) => r.note).join("\n"), images, records };
}

async function read(a: AttachmentIn, bytes: Uint8Array, deps: ReadDeps, signal: AbortSignal, budget: number): Promise<Reading> {
  const what = describe(a, bytes.length);
  const image = sniffImage(bytes);
  if (image)
    return {
      status: "image",
      note: `[${what}: the image is attached]`,
      image: { type: "image_url", image_url: { url: `data:${image};base64,${base64(bytes)}` } },
    };
  if (a.kind === "image") return { status: "described", note: `[${what}: an image in a format the model cannot be shown]` };
  if (a.kind === "voice" || a.kind === "audio" || a.mime?.startsWith("audio/")) return hear(a, bytes, what, deps, signal);
  if (a.kind === "video") return { status: "described", note: `[${what}: a video, which this agent cannot watch]` };
  let text: string | null = null;
  let bound = "";
  if (isPdf(bytes)) {
    const pdf = await (deps.pdfText ?? pdfText)(bytes, { signal }).catch(
      (err: unknown): PdfReading => (deps.log?.(`PDF text not extracted: ${why(err)}`), { text: null, pages: 0, read: 0, stopped: null }),
    );
    bound = pdfBound(pdf);
    if (pdf.stopped === "inflated")
      return {
        status: "described",
        note: `[${what}: a PDF whose compressed content inflates past ${formatBytes(PDF_LIMITS.maxInflatedBytes)}, so it was not read]`,
        detail: "inflates past the limit",
      };
    if (pdf.text === null)
      return {
        status: "described",
        note: `[${what}: ${bound ? `${bound}, and no text was found in them` : "a PDF without text that could be extracted (scanned pages, say)"}]`,
      };
    text = pdf.text;
  } else if (looksTextual(a.mime, a.name)) {
    text = decodeText(bytes);
    if (text === null) return { status: "described", note: `[${what}: named as text, but its bytes are not UTF-8 text]` };
  } else {
    return { status: "described", note: `[${what}: a file this agent cannot open; only its name, type and size are known]` };
  }
  if (budget <= 0) return { status: "described", note: `[${what}: not included, the message's other documents already fill what is inlined]` };
  const cut = text.length > budget;
  const shown = cut ? `${text.slice(0, budget)}\n[… cut here: ${text.length - budget} more characters were not included]` : text;
  return { status: "inlined", note: `[${what}, its text${bound ? ` (${bound})` : ""}:]\n${fenced(shown)}` };
}

/** What a PDF reading that stopped early says ("PDF of 30,000 pages: read the first 200"); empty when it read to the end. */
function pdfBound(p: PdfReading): string {
  if (!p.stopped || p.stopped === "inflated") return "";
  const head = `PDF of ${p.pages.toLocaleString("en-US")} pages: read the first ${p.read.toLocaleString("en-US")}`;
  if (p.stopped === "pages") return head;
  if (p.stopped === "chars") return `${head} (its text passed ${PDF_LIMITS.maxChars.toLocaleString("en-US")} characters)`;
  if (p.stopped === "time") return `${head} (reading took over ${PDF_LIMITS.maxMs / 1000} s)`;
  return `${head} (reading was stopped)`;
}

/** Runs `fn` with the attachment marked as being read (when `mark`), clearing the mark after, whatever happened. */
async function markedWhile<T>(deps: ReadDeps, index: number, mark: boolean, fn: () => Promise<T>): Promise<T> {
  if (!mark || !deps.marks) return fn();
  await deps.marks.set(index).catch((err: unknown) => deps.log?.(`attachment ${index} not marked as being read: ${why(err)}`));
  try {
    return await fn();
  } finally {
    await deps.marks.clear(index).catch((err: unknown) => deps.log?.(`attachment ${index} mark not cleared: ${why(err)}`));
  }
}

async function hear(a: AttachmentIn, bytes: Uint8Array, what: string, deps: ReadDeps, signal: AbortSignal): Promise<Reading> {
  if (!deps.transcribe) {
    return {
      status: "unheard",
      note: `[${what}: this agent cannot hear audio (no speech-to-text is configured), so it does not know what was said; it should tell the sender and ask them to type it]`,
    };
  }
  try {
    const text = await deps.transcribe({ bytes, mime: a.mime, name: a.name }, signal);
    return { status: "transcribed", note: text ? `[${what}, transcribed: "${text}"]` : `[${what}, transcribed: no speech was recognised]` };
  } catch (err) {
    return { status: "failed", note: `[${what}: it could not be transcribed (${why(err)}), so what was said is not known]`, detail: why(err) };
  }
}
