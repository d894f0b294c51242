import { joinUrl } from "../agent/index.ts";
import type { TranscribeConfig } from "./types.ts";
import { errorMessage } from "../log/index.ts";

/** Longest a transcription may take before the voice note is given up on. */
export const TRANSCRIBE_TIMEOUT_MS = 60_000;

/** Transcription failed: the provider said no (with its status), or could not be reached. */
export class TranscribeError extends Error {
  override readonly name = "TranscribeError";
  readonly status: number | null;

  constructor(message: string, status: number | null) {
    super(message);
    this.status = status;
  }
}

/** A file name the provider recognises the format by (it reads the extension). */
function fileName(name: string | null, mime: string | null): string {
  if (name && /\.\w{2,5}$/.test(name)) return name;
  const ext =
    mime?.includes("ogg") || mime?.includes("opus")
      ? "ogg"
      : mime?.includes("mpeg") || mime?.includes("mp3")
        ? "mp3"
        : mime?.includes("wav")
          ? "wav"
          : mime?.includes("mp4") || mime?.includes("m4a")
            ? "m4a"
            : mime?.includes("webm")
              ? "webm"
              : "ogg";
  return `${name ?? "voice"}.${ext}`;
}

/**
 * Speech to text through the provider's OpenAI-compatible `POST {baseUrl}/audio/transcriptions`
 * (multipart: `file`, `model`): the text, or a {@link TranscribeError}.
 */
export async function transcribe(
  cfg: TranscribeConfig,
  audio: { bytes: Uint8Array; mime: string | null; name: string | null },
  opts: { fetch?: typeof fetch; signal?: AbortSignal } = {},
): Promise<string> {
  const form = new FormData();
  form.append("model", cfg.model);
  form.append("file", new Blob([audio.bytes], { type: audio.mime ?? "application/octet-stream" }), fileName(audio.name, audio.mime));
  const signal = opts.signal ? AbortSignal.any([opts.signal, AbortSignal.timeout(TRANSCRIBE_TIMEOUT_MS)]) : AbortSignal.timeout(TRANSCRIBE_TIMEOUT_MS);
  let res: Response;
  try {
    res = await (opts.fetch ?? fetch)(joinUrl(cfg.baseUrl, "audio/transcriptions"), {
      method: "POST",
      body: form,
      headers: cfg.apiKey ? { authorization: `Bearer ${cfg.apiKey}` } : {},
      signal,
    });
  } catch (err) {
    throw new TranscribeError(`the speech-to-text endpoint could not be reached (${errorMessage(err)})`, null);
  }
  if (!res.ok) {
    await res.body?.cancel();
    throw new TranscribeError(`the speech-to-text endpoint answered HTTP ${res.status}`, res.status);
  }
  const body = (await res.json().catch(() => null)) as { text?: unknown } | null;
  if (!body || typeof body.text !== "string") throw new TranscribeError("the speech-to-text endpoint answered without a text", res.status);
  return body.text.trim();
}
