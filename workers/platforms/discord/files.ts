import type { Download } from "../../attachments/index.ts";
import { fetchCapped } from "../files.ts";
import type { Attachment } from "../types.ts";

/** An attachment: its CDN URL is signed by Discord (and expires), so it needs no token. */
export async function downloadDiscordFile(fetchImpl: typeof fetch, a: Attachment, opts: { maxBytes: number; signal?: AbortSignal }): Promise<Download> {
  let url: URL;
  try {
    url = new URL(a.ref);
  } catch {
    return { ok: false, reason: "failed", detail: "it has no valid URL" };
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return { ok: false, reason: "failed", detail: "it has no web URL" };
  return fetchCapped(fetchImpl, url.href, {}, opts.maxBytes, "Discord's CDN", opts.signal);
}
