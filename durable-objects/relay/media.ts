import { describe, formatBytes, sniffImage, type AttachmentIn } from "../../workers/attachments/index.ts";
import { attachmentKey, keepFile } from "../../workers/conversations/files.ts";
import { logger } from "../../workers/log/index.ts";
import { adapterFor } from "../../workers/platforms/registry.ts";
import type { Attachment } from "../../workers/platforms/types.ts";
import { MEDIA_LINK_TTL_S, mediaLink, relayMediaPrefix } from "../../workers/relay/media.ts";
import { settings } from "../../workers/settings.ts";

/** Kept relayed attachments are deleted this long after they were fetched. */
export const RELAY_MEDIA_RETENTION_MS = 24 * 60 * 60 * 1000;

/** What a frame's attachments are while they wait to be fetched. */
export interface PendingMedia {
  platform: string;
  attachments: AttachmentIn[];
}

/** One fetched (or failed) attachment of a relayed message. */
export interface RelayedMedia {
  key: string | null;
  kind: AttachmentIn["kind"];
  mime: string | null;
  size: number | null;
  filename: string | null;
  seconds: number | null;
  error: string | null;
}

/**
 * Downloads a relayed message's attachments with its platform's credentials, capped at
 * ATTACHMENT_MAX_BYTES, into R2 under the gateway's prefix. Never throws: a file that
 * cannot be had is listed with why (the gateway's agent is told).
 */
export async function fetchRelayMedia(env: Env, gatewayId: string, bufferId: string, pending: PendingMedia): Promise<RelayedMedia[]> {
  const adapter = adapterFor(env, pending.platform);
  const max = settings(env).attachments.maxBytes;
  const out: RelayedMedia[] = [];
  for (const [i, a] of pending.attachments.entries()) {
    const base = { kind: a.kind, mime: a.mime, size: a.size, filename: a.name, seconds: a.seconds ?? null };
    if (a.size !== null && a.size > max) {
      out.push({ ...base, key: null, error: `larger than the ${formatBytes(max)} this connector fetches` });
      continue;
    }
    const got = adapter?.download
      ? await adapter.download(a as Attachment, { maxBytes: max })
      : ({ ok: false, reason: "failed", detail: `${pending.platform} cannot be asked for it` } as const);
    if (!got.ok) {
      out.push({ ...base, key: null, error: got.reason === "too_large" ? `larger than the ${formatBytes(max)} this connector fetches` : got.detail });
      continue;
    }
    const key = attachmentKey(relayMediaPrefix(gatewayId), bufferId, i, a.name);
    const mime = sniffImage(got.bytes) ?? got.mime ?? a.mime;
    try {
      await keepFile(env.FILES, key, got.bytes, mime, { gateway: gatewayId });
      out.push({ ...base, mime, size: got.bytes.byteLength, key, error: null });
    } catch (err) {
      logger.child(`relay ${gatewayId}`).error(`could not keep ${describe(a)}`, { err });
      out.push({ ...base, key: null, error: "the connector could not keep it" });
    }
  }
  return out;
}

/**
 * An inbound frame as it goes out: with `media_urls` (links signed for the gateway, valid
 * an hour from now; "" for a file that could not be fetched), `media` (the same order) and
 * `message_type`. Frames without attachments go as they were stored.
 */
export async function withMediaLinks(frame: string, mediaJson: string | null, link: { origin: string; secret: string; nowS: number }): Promise<string> {
  if (!mediaJson) return frame;
  const media = JSON.parse(mediaJson) as RelayedMedia[];
  const obj = JSON.parse(frame) as { event: Record<string, unknown> };
  const exp = link.nowS + MEDIA_LINK_TTL_S;
  obj.event.media_urls = await Promise.all(media.map((m) => (m.key ? mediaLink(link.origin, m.key, link.secret, exp) : "")));
  obj.event.media = media.map(({ kind, mime, size, filename, seconds, error }) => ({ kind, mime, size, filename, seconds, ...(error ? { error } : {}) }));
  obj.event.message_type = media[0]?.kind ?? "text";
  return `${JSON.stringify(obj)}\n`;
}
