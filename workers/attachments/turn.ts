import * as z from "zod";
import { sniffImage } from "./kinds.ts";
import { base64, readAttachments, type ReadDeps } from "./read.ts";
import type { AttachmentIn, AttachmentRecord, ImagePart, TurnAttachments } from "./types.ts";

/** Attachments as a turn's `meta` carries them (stored JSON: checked again when read back). */
const Items = z.lazy(() =>
  z
    .array(
      z.object({
        kind: z.enum(["image", "audio", "voice", "video", "document"]),
        name: z.string().nullable(),
        mime: z.string().nullable(),
        size: z.number().nullable(),
        seconds: z.number().nullish(),
        ref: z.string(),
        unavailable: z.string().nullish(),
      }),
    )
    .max(20),
);

/** The attachments a turn's `meta.attachments` lists (none when absent or not of that shape). */
export function turnAttachments(meta: Record<string, unknown>): AttachmentIn[] {
  const parsed = Items.safeParse(meta.attachments);
  return parsed.success ? parsed.data : [];
}

/** What a host adds to reading: bringing kept images back for a turn run again. */
export interface TurnReadDeps extends ReadDeps {
  /** Bytes kept under `key` (by `keep`), or null when they are gone. */
  load?(key: string): Promise<{ bytes: Uint8Array; mime: string | null } | null>;
}

/**
 * A turn's attachments for the model. The first attempt reads them (downloads, keeps,
 * transcribes); a turn run again after a restart has its `earlier` records, so nothing is
 * fetched or transcribed twice: its kept images are loaded back, the notes are the same.
 */
export async function readTurnAttachments(
  meta: Record<string, unknown>,
  earlier: readonly AttachmentRecord[],
  deps: TurnReadDeps,
  signal: AbortSignal,
): Promise<TurnAttachments | null> {
  if (earlier.length > 0) {
    const images: ImagePart[] = [];
    for (const r of earlier) {
      if (r.status !== "image" || !r.key || !deps.load) continue;
      const kept = await deps.load(r.key).catch(() => null);
      const type = kept ? sniffImage(kept.bytes) : null;
      if (kept && type) images.push({ type: "image_url", image_url: { url: `data:${type};base64,${base64(kept.bytes)}` } });
    }
    return { text: earlier.map((r) => r.note).join("\n"), images, records: [...earlier] };
  }
  const items = turnAttachments(meta);
  return items.length > 0 ? readAttachments(items, deps, signal) : null;
}
