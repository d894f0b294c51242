import type { Download } from "../attachments/index.ts";
import { withDeadline } from "./deadline.ts";
import { PLATFORM_TIMEOUT_MS } from "./types.ts";

/** Longest one attachment download may take (a big file on a slow link). */
export const DOWNLOAD_TIMEOUT_MS = 4 * PLATFORM_TIMEOUT_MS;

/**
 * GETs a file, reading at most `maxBytes` (a larger one is stopped as soon as it is known
 * to be: by its Content-Length, or mid-stream). `what` names the source in failures, never
 * the URL: a Telegram file URL carries the bot token.
 */
export async function fetchCapped(
  fetchImpl: typeof fetch,
  url: string,
  init: RequestInit,
  maxBytes: number,
  what: string,
  signal?: AbortSignal,
): Promise<Download> {
  // Its timer is cleared when the download ends (deadline.ts: a Relay object fetching files must be able to hibernate).
  return withDeadline(DOWNLOAD_TIMEOUT_MS, (timeout) => download(fetchImpl, url, init, maxBytes, what, timeout, signal));
}

async function download(
  fetchImpl: typeof fetch,
  url: string,
  init: RequestInit,
  maxBytes: number,
  what: string,
  timeout: AbortSignal,
  signal: AbortSignal | undefined,
): Promise<Download> {
  let res: Response;
  try {
    res = await fetchImpl(url, { redirect: "follow", ...init, method: "GET", signal: signal ? AbortSignal.any([signal, timeout]) : timeout });
  } catch {
    return {
      ok: false,
      reason: "failed",
      detail: signal?.aborted ? "the turn was stopped" : timeout.aborted ? `${what} took too long` : `${what} could not be reached`,
    };
  }
  if (!res.ok) {
    await res.body?.cancel();
    return { ok: false, reason: "failed", detail: `${what} answered HTTP ${res.status}` };
  }
  const declared = Number(res.headers.get("content-length") ?? NaN);
  if (declared > maxBytes) {
    await res.body?.cancel();
    return { ok: false, reason: "too_large", detail: `${declared} bytes` };
  }
  const mime = res.headers.get("content-type")?.split(";")[0]?.trim() || null;
  if (!res.body) return { ok: true, bytes: new Uint8Array(), mime };
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = res.body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > maxBytes) {
        await reader.cancel();
        return { ok: false, reason: "too_large", detail: `over ${maxBytes} bytes` };
      }
      chunks.push(value);
    }
  } catch {
    return { ok: false, reason: "failed", detail: signal?.aborted ? "the turn was stopped" : `${what} broke off the download` };
  }
  const bytes = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    bytes.set(c, at);
    at += c.byteLength;
  }
  // A generic type says nothing; the reader looks at the bytes and the name instead.
  return { ok: true, bytes, mime: mime === "application/octet-stream" ? null : mime };
}
