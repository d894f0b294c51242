// Attachments people send (photos, documents, voice notes), read for the agent: the same
// code at the edge (session objects, R2) and on a relay gateway.
export { attachmentSettings, DEFAULT_ATTACHMENT_MAX_BYTES } from "./config.ts";
export { describe, formatBytes, sniffImage } from "./kinds.ts";
export { withAttachments } from "./model.ts";
export { pdfText, PDF_LIMITS } from "./pdf.ts";
export { INLINE_TEXT_CHARS, readAttachments, type ReadDeps, type ReadMarks } from "./read.ts";
export { transcribe } from "./transcribe.ts";
export type { AttachmentIn, AttachmentRecord, AttachmentSettings, AttachmentStatus, Download, TurnAttachments } from "./types.ts";
export { readTurnAttachments, type TurnReadDeps } from "./turn.ts";
