import type { AttachmentIn } from "./types.ts";

/** Image types the OpenAI-style providers take as `image_url` parts. */
const SHOWN_IMAGES = ["image/png", "image/jpeg", "image/gif", "image/webp"] as const;

/** The image type the bytes really are (platforms' declared types are the sender's word), or null. */
export function sniffImage(bytes: Uint8Array): (typeof SHOWN_IMAGES)[number] | null {
  const at = (i: number, ...b: number[]) => b.every((x, k) => bytes[i + k] === x);
  if (at(0, 0x89, 0x50, 0x4e, 0x47)) return "image/png";
  if (at(0, 0xff, 0xd8, 0xff)) return "image/jpeg";
  if (at(0, 0x47, 0x49, 0x46, 0x38)) return "image/gif";
  if (at(0, 0x52, 0x49, 0x46, 0x46) && at(8, 0x57, 0x45, 0x42, 0x50)) return "image/webp";
  return null;
}

/** Whether the bytes are a PDF (`%PDF-`), whatever the sender declared. */
export function isPdf(bytes: Uint8Array): boolean {
  return bytes[0] === 0x25 && bytes[1] === 0x50 && bytes[2] === 0x44 && bytes[3] === 0x46 && bytes[4] === 0x2d;
}

const TEXT_MIMES =
  /^(text\/|application\/(json|ld\+json|xml|x-yaml|yaml|toml|javascript|typescript|x-sh|x-python|sql|csv|x-ndjson|graphql)\b)|[+/](json|xml|yaml)$/i;
const TEXT_NAMES =
  /\.(txt|md|markdown|rst|csv|tsv|json|jsonl|ndjson|ya?ml|toml|ini|cfg|conf|env|log|xml|html?|css|scss|svg|js|mjs|cjs|jsx|ts|tsx|py|rb|go|rs|java|kt|swift|c|h|cc|cpp|hpp|cs|php|pl|lua|r|sql|sh|bash|zsh|fish|ps1|bat|dockerfile|makefile|gradle|tf|proto|graphql|diff|patch|tex)$/i;

/** Whether a file is meant to be read as text (by its type or, when the type is generic, its name). */
export function looksTextual(mime: string | null, name: string | null): boolean {
  if (mime && TEXT_MIMES.test(mime)) return true;
  const generic = !mime || mime === "application/octet-stream" || mime === "binary/octet-stream";
  return generic && TEXT_NAMES.test(name ?? "");
}

/** UTF-8 text of the bytes, or null when they are not text (invalid UTF-8, NUL bytes). */
export function decodeText(bytes: Uint8Array): string | null {
  try {
    const text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
    return text.includes("\u0000") ? null : text.replace(/^\uFEFF/, "");
  } catch {
    return null;
  }
}

/** "12 KB", "3.4 MB": sizes as people read them. */
export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${Math.round(n / 1024)} KB`;
  return `${(n / (1024 * 1024)).toFixed(n < 10 * 1024 * 1024 ? 1 : 0)} MB`;
}

const KIND_WORDS: Record<AttachmentIn["kind"], string> = { image: "image", voice: "voice note", audio: "audio file", video: "video", document: "document" };

/** How an attachment is named in its note: "image photo.jpg (image/jpeg, 88 KB)", "voice note (2 s, audio/ogg)". */
export function describe(a: Pick<AttachmentIn, "kind" | "name" | "mime" | "size" | "seconds">, size: number | null = a.size): string {
  const facts = [a.seconds ? `${Math.round(a.seconds)} s` : null, a.mime, size !== null ? formatBytes(size) : null].filter(Boolean);
  return `${KIND_WORDS[a.kind]}${a.name ? ` ${a.name}` : ""}${facts.length ? ` (${facts.join(", ")})` : ""}`;
}
