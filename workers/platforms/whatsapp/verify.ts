import { hmacSha256Hex, safeEqual } from "../../security.ts";
import type { Verification } from "../types.ts";

/** The header Meta signs every webhook POST with: `sha256=<hex HMAC-SHA256 of the body under the app secret>`. */
export const SIGNATURE_HEADER = "x-hub-signature-256";

/**
 * Meta's signature over the body's bytes exactly as received (re-serialised JSON would not
 * match: Meta signs its own escaping of non-ASCII text). Compared in constant time.
 */
export async function verifyWhatsApp(headers: Headers, rawBody: Uint8Array, appSecret: string): Promise<Verification> {
  const sig = headers.get(SIGNATURE_HEADER);
  if (!sig) return { ok: false, reason: "missing" };
  if (!/^sha256=[0-9a-fA-F]{64}$/.test(sig.trim())) return { ok: false, reason: "bad_signature" };
  const expected = `sha256=${await hmacSha256Hex(appSecret, rawBody)}`;
  return (await safeEqual(sig.trim().toLowerCase(), expected)) ? { ok: true } : { ok: false, reason: "bad_signature" };
}

/**
 * The subscription check Meta sends when the callback URL is saved: `hub.mode=subscribe`,
 * `hub.verify_token` (compared in constant time with ours) and `hub.challenge`, echoed bare
 * with 200. Anything else is 403, and Meta then sends nothing.
 */
export async function whatsappHandshake(query: URLSearchParams, verifyToken: string): Promise<Response> {
  const mode = query.get("hub.mode");
  const token = query.get("hub.verify_token");
  const challenge = query.get("hub.challenge");
  const fine = mode === "subscribe" && token !== null && challenge !== null && /^[A-Za-z0-9_-]{1,256}$/.test(challenge);
  if (!fine || !(await safeEqual(token, verifyToken))) return new Response("verification failed", { status: 403, headers: { "content-type": "text/plain" } });
  return new Response(challenge, { status: 200, headers: { "content-type": "text/plain" } });
}
