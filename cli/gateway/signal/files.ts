import { uploadKey, uploadLink, UPLOAD_LINK_TTL_S } from "../../../workers/relay/media.ts";
import { errorMessage } from "../../../workers/log/index.ts";
import type { SignalCli } from "./cli.ts";

/** signal-cli folds a long-text attachment into `message`: it is no file. */
const LONG_TEXT = "text/x-signal-plain";

/** Where uploads go: the connector's origin (http(s), from the relay URL), this gateway's id and secret. */
export interface UploadTarget {
  origin: string;
  gatewayId: string;
  secret: string;
  fetch: typeof fetch;
  now: () => number;
}

/** The connector's http(s) origin of a normalised `ws(s)://…/relay` URL. */
export function connectorOrigin(relayUrl: string): string {
  const u = new URL(relayUrl);
  return `${u.protocol === "wss:" ? "https:" : "http:"}//${u.host}`;
}

interface AttachmentRef {
  id: string;
  contentType: string | null;
}

/** The attachments of a received item, whichever of the four shapes it came in. */
export function attachmentsOf(received: unknown): AttachmentRef[] {
  const r = received as { params?: unknown } | null;
  const p = (r && typeof r === "object" && "params" in r ? r.params : r) as { envelope?: unknown; result?: { envelope?: unknown } } | null;
  const envelope = (p?.result?.envelope ?? p?.envelope) as { dataMessage?: { attachments?: unknown } } | undefined;
  const list = envelope?.dataMessage?.attachments;
  if (!Array.isArray(list)) return [];
  return list.flatMap((a: { id?: unknown; contentType?: unknown }) =>
    typeof a?.id === "string" && a.contentType !== LONG_TEXT ? [{ id: a.id, contentType: typeof a.contentType === "string" ? a.contentType : null }] : [],
  );
}

/**
 * Fetches each attachment from signal-cli (`getAttachment {id}`: base64 data) and puts it to
 * the Worker through a link signed for that one file, short-lived. Returns the R2 key of
 * each file that made it, by attachment id; one that did not is left out (the edge then
 * says it could not be read), and why is logged.
 */
export async function uploadAttachments(cli: SignalCli, received: unknown, to: UploadTarget, log: (line: string) => void): Promise<Record<string, string>> {
  const files: Record<string, string> = {};
  for (const a of attachmentsOf(received)) {
    const got = await cli.rpc("getAttachment", { id: a.id });
    const data = got.ok ? (got.result as { data?: unknown } | null)?.data : undefined;
    if (typeof data !== "string") {
      log(`signal-cli: attachment ${a.id} could not be read (${got.ok ? "no data" : got.result.error})`);
      continue;
    }
    const bytes = Buffer.from(data, "base64");
    const key = uploadKey(to.gatewayId, crypto.randomUUID());
    const link = await uploadLink(to.origin, key, to.secret, Math.floor(to.now() / 1000) + UPLOAD_LINK_TTL_S);
    try {
      const res = await to.fetch(link, {
        method: "PUT",
        headers: { "content-type": a.contentType ?? "application/octet-stream", "content-length": String(bytes.byteLength) },
        body: bytes,
      });
      await res.body?.cancel();
      if (res.ok) files[a.id] = key;
      else log(`relay: the Worker refused attachment ${a.id} (HTTP ${res.status}${res.status === 413 ? ": over ATTACHMENT_MAX_BYTES" : ""})`);
    } catch (err) {
      log(`relay: uploading attachment ${a.id} failed: ${errorMessage(err)}`);
    }
  }
  return files;
}
