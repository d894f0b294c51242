import type { Api } from "grammy";
import type { Download } from "../../attachments/index.ts";
import { fetchCapped } from "../files.ts";
import type { Attachment } from "../types.ts";
import { errorMessage } from "../../log/index.ts";

/**
 * A file of a message: `getFile` for its path (Telegram lets bots download up to 20 MB),
 * then `<apiRoot>/file/bot<token>/<path>`. The URL holds the token, so no failure names it.
 */
export async function downloadTelegramFile(
  api: Api,
  where: { apiRoot: string; token: string; fetch: typeof fetch },
  a: Attachment,
  opts: { maxBytes: number; signal?: AbortSignal },
): Promise<Download> {
  let file: Awaited<ReturnType<Api["getFile"]>>;
  try {
    file = await api.getFile(a.ref);
  } catch (err) {
    // grammY's errors name the method and Telegram's description, never the token.
    const said = errorMessage(err);
    return { ok: false, reason: /too big/i.test(said) ? "too_large" : "failed", detail: `Telegram getFile failed: ${said}` };
  }
  if (file.file_size !== undefined && file.file_size > opts.maxBytes) return { ok: false, reason: "too_large", detail: `${file.file_size} bytes` };
  if (!file.file_path) return { ok: false, reason: "failed", detail: "Telegram gave no path for the file" };
  const url = `${where.apiRoot.replace(/\/+$/, "")}/file/bot${where.token}/${file.file_path.split("/").map(encodeURIComponent).join("/")}`;
  return fetchCapped(where.fetch, url, {}, opts.maxBytes, "Telegram's file server", opts.signal);
}
