import { resolveProvider, type ModelConfig } from "../agent/index.ts";
import type { AttachmentSettings } from "./types.ts";

/** Largest attachment fetched when `ATTACHMENT_MAX_BYTES` is unset: 10 MiB. */
export const DEFAULT_ATTACHMENT_MAX_BYTES = 10 * 1024 * 1024;

/**
 * Attachment settings from their raw values (the Worker's env, the gateway's environment):
 * voice notes are transcribed only where the provider is OpenAI-compatible and
 * `LLM_TRANSCRIBE_MODEL` names a model for its `/audio/transcriptions`.
 */
export function attachmentSettings(v: { maxBytes: string | undefined; transcribeModel: string | undefined; model: ModelConfig }): AttachmentSettings {
  const max = Number(v.maxBytes);
  const provider = resolveProvider(v.model);
  const base = v.model.baseUrl;
  const transcribe =
    v.transcribeModel && base && provider.ok && provider.provider === "openai"
      ? { baseUrl: base, model: v.transcribeModel, ...(v.model.apiKey ? { apiKey: v.model.apiKey } : {}) }
      : null;
  return { maxBytes: v.maxBytes !== undefined && Number.isInteger(max) && max > 0 ? max : DEFAULT_ATTACHMENT_MAX_BYTES, transcribe };
}
