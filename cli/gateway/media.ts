import { transcribe, type AttachmentSettings, type ReadMarks, type TurnReadDeps } from "../../workers/attachments/index.ts";
import { fetchCapped } from "../../workers/platforms/files.ts";
import type { WireMedia } from "../../workers/relay/frames.ts";

/**
 * The attachments of an inbound frame as a turn's `meta.attachments`: each with its
 * signed link (`media_urls`, same order as `media`), or why the connector could not fetch it.
 */
export function frameAttachments(urls: readonly string[] | undefined, media: readonly WireMedia[] | undefined) {
  return (media ?? []).map((m, i) => {
    const url = urls?.[i] ?? "";
    return {
      kind: m.kind,
      name: m.filename,
      mime: m.mime,
      size: m.size,
      seconds: m.seconds,
      ref: url,
      ...(m.error || !url ? { unavailable: m.error ?? "the connector sent no link for it" } : {}),
    };
  });
}

/**
 * How the gateway reads attachments: fetched once through the connector's signed links
 * (short-lived: when the turn runs, which is at once unless its session is busy), never
 * kept here, voice notes transcribed on this gateway's own provider when
 * LLM_TRANSCRIBE_MODEL is set.
 */
export function gatewayReadDeps(settings: AttachmentSettings, fetchImpl: typeof fetch, log: (line: string) => void, marks?: ReadMarks): TurnReadDeps {
  const cfg = settings.transcribe;
  return {
    maxBytes: settings.maxBytes,
    download: (a, signal) => fetchCapped(fetchImpl, a.ref, {}, settings.maxBytes, "the connector", signal),
    ...(marks ? { marks } : {}),
    ...(cfg
      ? {
          transcribe: (audio: { bytes: Uint8Array; mime: string | null; name: string | null }, signal: AbortSignal) =>
            transcribe(cfg, audio, { fetch: fetchImpl, signal }),
        }
      : {}),
    log,
  };
}
