import type { Download } from "../../attachments/index.ts";
import { fetchCapped } from "../files.ts";
import type { Attachment } from "../types.ts";

/**
 * Whether `url` is Slack's to be sent the bot token: the API's own domain and scheme
 * (`https://files.slack.com` beside `https://slack.com/api/`). The token never goes
 * anywhere else, whatever a payload's `url_private` says.
 */
export function isSlackFileUrl(url: string, apiUrl: string): boolean {
  try {
    const u = new URL(url);
    const api = new URL(apiUrl);
    return u.protocol === api.protocol && (u.hostname === api.hostname || u.hostname.endsWith(`.${api.hostname}`));
  } catch {
    return false;
  }
}

/** A shared file: `url_private(_download)` with the bot token (files:read). */
export async function downloadSlackFile(
  where: { apiUrl: string; botToken: string; fetch: typeof fetch },
  a: Attachment,
  opts: { maxBytes: number; signal?: AbortSignal },
): Promise<Download> {
  if (!isSlackFileUrl(a.ref, where.apiUrl)) return { ok: false, reason: "failed", detail: "its URL is not on Slack's file host" };
  // No redirects: a redirect elsewhere would take the token along.
  return fetchCapped(
    where.fetch,
    a.ref,
    { headers: { authorization: `Bearer ${where.botToken}` }, redirect: "manual" },
    opts.maxBytes,
    "Slack's file server",
    opts.signal,
  );
}
