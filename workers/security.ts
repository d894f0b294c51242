const encoder = new TextEncoder();

/** The SHA-256 of `data` (text as UTF-8), as lower-case hex. */
export async function sha256Hex(data: string | Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", typeof data === "string" ? encoder.encode(data) : data));
  return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * Compares two secrets in constant time. Both sides are hashed first, so neither their
 * contents nor their lengths leak through timing.
 */
export async function safeEqual(a: string, b: string): Promise<boolean> {
  const [ha, hb] = await Promise.all([crypto.subtle.digest("SHA-256", encoder.encode(a)), crypto.subtle.digest("SHA-256", encoder.encode(b))]);
  const x = new Uint8Array(ha);
  const y = new Uint8Array(hb);
  let diff = 0;
  for (const [i, byte] of x.entries()) {
    const other = y[i];
    if (other === undefined) return false; // both are 32-byte digests: never
    diff |= byte ^ other;
  }
  return diff === 0;
}

/** Lower-case hex of bytes. */
export function toHex(bytes: ArrayBuffer | Uint8Array): string {
  const u = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  let out = "";
  for (const b of u) out += b.toString(16).padStart(2, "0");
  return out;
}

/**
 * Imported HMAC keys by secret: a signing secret comes from config (a handful per Worker),
 * and importing it again for every webhook was work each request repeated. Bounded, so a
 * caller passing many secrets cannot grow it without end.
 */
/** A Web Crypto key (named so because this file is also compiled for Node, where the global type is not declared). */
type Key = Awaited<ReturnType<typeof crypto.subtle.importKey>>;
const hmacKeys = new Map<string, Key>();
const HMAC_KEYS_KEPT = 16;

// The key itself is kept, not the promise of it: a promise made in one request and awaited
// in another would tie the second to the first's I/O context.
async function hmacKey(secret: string): Promise<Key> {
  const known = hmacKeys.get(secret);
  if (known) return known;
  const key = await crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  if (hmacKeys.size < HMAC_KEYS_KEPT) hmacKeys.set(secret, key);
  return key;
}

/** HMAC-SHA256 of `message` (text, or raw bytes) under `secret`, as lower-case hex. */
export async function hmacSha256Hex(secret: string, message: string | Uint8Array): Promise<string> {
  return toHex(await crypto.subtle.sign("HMAC", await hmacKey(secret), typeof message === "string" ? encoder.encode(message) : message));
}

/** The bytes of `parts` one after another (text as UTF-8). */
export function concatBytes(...parts: Array<string | Uint8Array>): Uint8Array {
  const chunks = parts.map((p) => (typeof p === "string" ? encoder.encode(p) : p));
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}
