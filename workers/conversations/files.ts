import { readTurnAttachments, transcribe, type AttachmentIn, type TurnReadDeps } from "../attachments/index.ts";
import { adapterFor } from "../platforms/registry.ts";
import type { Attachment } from "../platforms/types.ts";
import type { RuntimeHost } from "../runtime/index.ts";
import { settings } from "../settings.ts";

/** Where a session's attachments are kept in the `FILES` bucket: everything under one prefix, so a session's files go with it. */
export function sessionFilesPrefix(sessionId: string): string {
  return `sessions/${sessionId}/`;
}

/** A file name safe in a key (the sender chose it). */
function safeName(name: string | null): string {
  return (name ?? "file").replace(/[^\w.-]+/g, "_").slice(-80) || "file";
}

/** The key of one attachment of a turn. */
export function attachmentKey(prefix: string, turnId: string, index: number, name: string | null): string {
  return `${prefix}${turnId}/${index}-${safeName(name)}`;
}

/** The key marking one attachment of a turn as being read (present only while it is). */
export function readingMark(prefix: string, turnId: string, index: number): string {
  return `${prefix}${turnId}/reading-${index}`;
}

/** Keeps bytes in R2 under `key`; returns the key. */
export async function keepFile(bucket: R2Bucket, key: string, bytes: Uint8Array, mime: string | null, meta: Record<string, string> = {}): Promise<string> {
  await bucket.put(key, bytes, { httpMetadata: { contentType: mime ?? "application/octet-stream" }, customMetadata: meta });
  return key;
}

/** Bytes kept in R2, or null when they are gone. */
export async function loadFile(bucket: R2Bucket, key: string): Promise<{ bytes: Uint8Array; mime: string | null } | null> {
  const obj = await bucket.get(key);
  if (!obj) return null;
  return { bytes: new Uint8Array(await obj.arrayBuffer()), mime: obj.httpMetadata?.contentType ?? null };
}

/**
 * How the edge reads a turn's attachments: downloaded once by the platform's adapter (with
 * its credentials), kept in `FILES` under the session's prefix, voice notes transcribed on
 * the provider's `/audio/transcriptions` when `LLM_TRANSCRIBE_MODEL` is set.
 */
export function edgeReadDeps(env: Env, where: { platform: string | null; prefix: string; turnId: string }, log: (line: string) => void): TurnReadDeps {
  const s = settings(env).attachments;
  const adapter = where.platform ? adapterFor(env, where.platform) : null;
  const cfg = s.transcribe;
  return {
    maxBytes: s.maxBytes,
    download: async (a: AttachmentIn, signal) => {
      if (!adapter?.download) return { ok: false, reason: "failed", detail: `${where.platform ?? "its platform"} cannot be asked for it here` };
      return adapter.download(a as Attachment, { maxBytes: s.maxBytes, signal });
    },
    keep: (a, index, bytes, mime) => keepFile(env.FILES, attachmentKey(where.prefix, where.turnId, index, a.name), bytes, mime, { turn: where.turnId }),
    load: (key) => loadFile(env.FILES, key),
    // Kept in FILES beside the turn's bytes: a crash while reading cannot lose the mark.
    marks: {
      has: async (index) => (await env.FILES.head(readingMark(where.prefix, where.turnId, index))) !== null,
      set: async (index) => void (await env.FILES.put(readingMark(where.prefix, where.turnId, index), "1")),
      clear: (index) => env.FILES.delete(readingMark(where.prefix, where.turnId, index)),
    },
    ...(cfg ? { transcribe: (audio: Parameters<NonNullable<TurnReadDeps["transcribe"]>>[0], signal: AbortSignal) => transcribe(cfg, audio, { signal }) } : {}),
    log,
  };
}

/** How a session object reads its turns' attachments (`RuntimeHost.attachments`), kept under the session's prefix. */
export function edgeAttachments(env: Env, sessionId: string, log: (line: string) => void): NonNullable<RuntimeHost["attachments"]> {
  return (turn, earlier, signal) =>
    readTurnAttachments(
      turn.meta,
      earlier,
      edgeReadDeps(env, { platform: turn.target?.platform ?? null, prefix: sessionFilesPrefix(sessionId), turnId: turn.turnId }, log),
      signal,
    );
}
