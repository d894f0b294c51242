import type { Download } from "../../attachments/index.ts";
import { fetchCapped } from "../files.ts";
import type { Attachment } from "../types.ts";
import { graph, type GraphSettings } from "./api.ts";
import { errorMessage } from "../../log/index.ts";

/** What `GET /{media-id}` answers: a short-lived URL on Meta's CDN, fetched with the same token. */
interface MediaInfo {
  url?: unknown;
  mime_type?: unknown;
  file_size?: unknown;
}

/** Whether Meta's answer points at https (the token goes along with the download). */
function isHttps(url: string): boolean {
  try {
    return new URL(url).protocol === "https:";
  } catch {
    return false;
  }
}

/**
 * A message's media: its id → `GET /{media-id}` → the URL, fetched with the access token
 * within `maxBytes` (a declared size over it is refused before any download). Never throws.
 */
export async function downloadWhatsAppMedia(g: GraphSettings, a: Attachment, opts: { maxBytes: number; signal?: AbortSignal }): Promise<Download> {
  if (!/^\d{1,64}$/.test(a.ref)) return { ok: false, reason: "failed", detail: "not a WhatsApp media id" };
  let info: MediaInfo;
  try {
    info = await graph<MediaInfo>(g, "GET", encodeURIComponent(a.ref), undefined, "media lookup");
  } catch (err) {
    return { ok: false, reason: "failed", detail: errorMessage(err) };
  }
  if (typeof info.file_size === "number" && info.file_size > opts.maxBytes) return { ok: false, reason: "too_large", detail: `${info.file_size} bytes` };
  if (typeof info.url !== "string" || !isHttps(info.url)) return { ok: false, reason: "failed", detail: "WhatsApp gave no https URL for the media" };
  // No redirects: a redirect elsewhere would take the token along.
  const got = await fetchCapped(
    g.fetch,
    info.url,
    { headers: { authorization: `Bearer ${g.accessToken}` }, redirect: "manual" },
    opts.maxBytes,
    "WhatsApp's media server",
    opts.signal,
  );
  return got.ok && got.mime === null && typeof info.mime_type === "string" ? { ...got, mime: (info.mime_type.split(";")[0] ?? "").trim() || null } : got;
}
