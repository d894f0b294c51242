/**
 * Attachments people send with a message (photos, documents, voice notes), as the agent
 * core reads them. Runtime-neutral: the edge (a session object, R2) and the relay gateway
 * (Node) read them with the same code, each with its own way of downloading and keeping.
 */

/** A file as a platform described it (structurally the platforms' neutral `Attachment`). */
export interface AttachmentIn {
  kind: "image" | "audio" | "voice" | "video" | "document";
  name: string | null;
  mime: string | null;
  size: number | null;
  seconds?: number | null | undefined;
  /** How its platform (or the relay) fetches it: opaque here. */
  ref: string;
  /** Why it cannot be had, known before any download (the relay connector could not fetch it). */
  unavailable?: string | null | undefined;
}

/** A download: the bytes, or why there are none. */
export type Download = { ok: true; bytes: Uint8Array; mime: string | null } | { ok: false; reason: "too_large" | "failed"; detail: string };

/**
 * How an attachment reached the agent: an image shown to the model, a document's text
 * inlined, a voice note transcribed (or not heard: no speech-to-text here), described by
 * name, type and size only, too large to fetch, or failed to fetch or read.
 */
export type AttachmentStatus = "image" | "inlined" | "transcribed" | "unheard" | "described" | "too_large" | "failed";

/** What is kept about one attachment of a turn (the API lists these with the user message). */
export interface AttachmentRecord {
  index: number;
  kind: AttachmentIn["kind"];
  name: string | null;
  mime: string | null;
  /** Bytes fetched, else as the platform declared. */
  size: number | null;
  seconds: number | null;
  status: AttachmentStatus;
  /** Where the bytes are kept (an R2 key at the edge), null when they are not. */
  key: string | null;
  /** Why it failed or was not read (no secrets: platform refusals are stated without URLs). */
  detail: string | null;
  /** The line the model got for it, as it stands in the stored user message. */
  note: string;
}

export type { ImagePart } from "../agent/types.ts";
import type { ImagePart } from "../agent/types.ts";

/** What a turn's attachments give the model: text for the user message, and images to show. */
export interface TurnAttachments {
  /** Appended to the user's words in the stored message (one note per attachment). */
  text: string;
  images: ImagePart[];
  records: AttachmentRecord[];
}

/** The provider's speech-to-text endpoint: `POST {baseUrl}/audio/transcriptions`. */
export interface TranscribeConfig {
  baseUrl: string;
  model: string;
  apiKey?: string;
}

/** How attachments are read (`ATTACHMENT_MAX_BYTES`, `LLM_TRANSCRIBE_MODEL` on `LLM_BASE_URL`). */
export interface AttachmentSettings {
  maxBytes: number;
  /** Where voice notes are transcribed; null: nowhere (the agent is told it cannot hear them). */
  transcribe: TranscribeConfig | null;
}
