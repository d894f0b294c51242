import { hmacSha256Hex, safeEqual } from "../security.ts";

/**
 * Links through which a relay gateway fetches the attachments of the messages it is sent:
 * the connector downloaded them with the platform's credentials and keeps them in R2 under
 * `relay/<gatewayId>/…`; the gateway GETs `{connector}/relay/media/<key>?exp=…&sig=…`,
 * signed with its own relay secret, valid for {@link MEDIA_LINK_TTL_S}. The platform's
 * credentials never cross the wire.
 */

/** How long a media link works after its frame was sent (fetch on receipt, not lazily). */
export const MEDIA_LINK_TTL_S = 60 * 60;

/** The path prefix of media links. */
export const MEDIA_PATH = "/relay/media/";

/** Where a gateway's relayed attachments are kept. */
export function relayMediaPrefix(gatewayId: string): string {
  return `relay/${gatewayId}/`;
}

/** The gateway a relayed attachment's key belongs to, or null for any other key. */
export function gatewayOfMediaKey(key: string): string | null {
  return /^relay\/([^/]+)\/[^]+$/.exec(key)?.[1] ?? null;
}

const signed = (key: string, exp: number) => `media:${key}:${exp}`;

/** A link to the attachment at `key`, for the gateway whose secret signs it. */
export async function mediaLink(origin: string, key: string, secret: string, exp: number): Promise<string> {
  const path = key.split("/").map(encodeURIComponent).join("/");
  return `${origin.replace(/\/+$/, "")}${MEDIA_PATH}${path}?exp=${exp}&sig=${await hmacSha256Hex(secret, signed(key, exp))}`;
}

/** Why a media link is refused, or ok. */
export type MediaLinkCheck = { ok: true } | { ok: false; reason: "malformed" | "expired" | "bad_signature" };

/** Checks a media link's signature (any of the gateway's secrets, for rotation) and expiry. */
export async function checkMediaLink(key: string, exp: string | null, sig: string | null, secrets: readonly string[], nowS: number): Promise<MediaLinkCheck> {
  if (!exp || !/^\d{1,12}$/.test(exp) || !sig || !/^[0-9a-f]{64}$/.test(sig)) return { ok: false, reason: "malformed" };
  let matched = false;
  for (const secret of secrets) if (await safeEqual(await hmacSha256Hex(secret, signed(key, Number(exp))), sig)) matched = true;
  if (!matched) return { ok: false, reason: "bad_signature" };
  return Number(exp) < nowS ? { ok: false, reason: "expired" } : { ok: true };
}

/**
 * Uploads the other way: a gateway that bridges a platform (Signal) puts each received file
 * to `PUT {connector}/relay/upload/<key>?exp=…&sig=…`, a link it signs itself with its own
 * relay secret (HMAC-SHA256 of `upload:<key>:<exp>`, distinct from download links), valid for
 * {@link UPLOAD_LINK_TTL_S}. The key is under the gateway's own prefix.
 */
export const UPLOAD_PATH = "/relay/upload/";
export const UPLOAD_LINK_TTL_S = 5 * 60;

const uploadSigned = (key: string, exp: number) => `upload:${key}:${exp}`;

/** Where a bridging gateway puts a received file: its own prefix, a fresh name. */
export function uploadKey(gatewayId: string, name: string): string {
  return `${relayMediaPrefix(gatewayId)}bridged/${name}`;
}

/** A link that lets the gateway whose secret signs it put one file at `key`. */
export async function uploadLink(origin: string, key: string, secret: string, exp: number): Promise<string> {
  const path = key.split("/").map(encodeURIComponent).join("/");
  return `${origin.replace(/\/+$/, "")}${UPLOAD_PATH}${path}?exp=${exp}&sig=${await hmacSha256Hex(secret, uploadSigned(key, exp))}`;
}

/** Checks an upload link (any of the gateway's secrets) and its expiry. */
export async function checkUploadLink(key: string, exp: string | null, sig: string | null, secrets: readonly string[], nowS: number): Promise<MediaLinkCheck> {
  if (!exp || !/^\d{1,12}$/.test(exp) || !sig || !/^[0-9a-f]{64}$/.test(sig)) return { ok: false, reason: "malformed" };
  let matched = false;
  for (const secret of secrets) if (await safeEqual(await hmacSha256Hex(secret, uploadSigned(key, Number(exp))), sig)) matched = true;
  if (!matched) return { ok: false, reason: "bad_signature" };
  return Number(exp) < nowS ? { ok: false, reason: "expired" } : { ok: true };
}
