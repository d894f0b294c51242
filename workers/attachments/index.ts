// Attachments people send (photos, documents, voice notes), read for the agent: the same
// code at the edge (session objects, R2) and on a relay gateway.
export { attachmentSettings, DEFAULT_ATTACHMENT_MAX_BYTES } from "./config.ts";
export { describe, formatBytes, sniffImage } from "./kinds.ts";
export { withAttachments } from "./model.ts";
export { pdfText, PDF_LIMITS, type PdfLimits, type PdfReading, type PdfReadOptions } from "./pdf.ts";
export { base64, INLINE_TEXT_CHARS, readAttachments, type ReadDeps, type ReadMarks } from "./read.ts";
export { transcribe, TranscribeError, TRANSCRIBE_TIMEOUT_MS } from "./transcribe.ts";
export type { AttachmentIn, AttachmentRecord, AttachmentSettings, AttachmentStatus, Download, ImagePart, TranscribeConfig, TurnAttachments } from "./types.ts";
export { readTurnAttachments, turnAttachments, type TurnReadDeps } from "./turn.ts";
