import type { Download } from "../../attachments/index.ts";
import { fetchCapped } from "../files.ts";
import type { Attachment } from "../types.ts";
import { baseOf, type HomeserverSettings } from "./api.ts";
import { MXC } from "./ids.ts";

/**
 * A message's file: its `mxc://server/media-id` fetched through the homeserver's authenticated
 * media endpoint (`GET /_matrix/client/v1/media/download/…`, spec v1.11, with the as_token); a
 * homeserver without it (404 or `M_UNRECOGNIZED`: older than v1.11) is asked at the
 * unauthenticated `/_matrix/media/v3/download/…` instead. Within `maxBytes`; never throws.
 */
export async function downloadMatrixMedia(h: HomeserverSettings, a: Attachment, opts: { maxBytes: number; signal?: AbortSignal }): Promise<Download> {
  const m = MXC.exec(a.ref);
  if (!m) return { ok: false, reason: "failed", detail: "not an mxc:// content URI" };
  const tail = `${encodeURIComponent(m[1] ?? "")}/${encodeURIComponent(m[2] ?? "")}`;
  const base = baseOf(h.homeserverUrl);
  // No redirects with the token: a redirect elsewhere would carry it along.
  const authed = await fetchCapped(
    h.fetch,
    `${base}/_matrix/client/v1/media/download/${tail}?user_id=${encodeURIComponent(h.botUser)}`,
    { headers: { authorization: `Bearer ${h.asToken}` }, redirect: "manual" },
    opts.maxBytes,
    "the Matrix homeserver's media",
    opts.signal,
  );
  if (authed.ok || authed.reason === "too_large" || !/HTTP (404|400)\b/.test(authed.detail)) return withMime(authed, a);
  const legacy = await fetchCapped(h.fetch, `${base}/_matrix/media/v3/download/${tail}`, {}, opts.maxBytes, "the Matrix homeserver's media", opts.signal);
  return withMime(legacy, a);
}

/** The event's mimetype where the homeserver gave none. */
function withMime(d: Download, a: Attachment): Download {
  return d.ok && d.mime === null && a.mime ? { ...d, mime: a.mime } : d;
}
