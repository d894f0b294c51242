import { isLoopbackHost } from "../agent/loopback.ts";
import { hmacSha256Hex, safeEqual } from "../security.ts";

/** How long a console sign-in lasts. */
export const SESSION_TTL_SECONDS = 12 * 60 * 60;

/** Domain separation: this HMAC under API_TOKEN signs console sessions and nothing else. */
const PURPOSE = "hermes-edge console session v1";

/**
 * The cookie's name. `__Host-` makes the browser refuse it unless it is `Secure`, has
 * `Path=/` and no `Domain`, so no sibling host can plant or shadow it; plain http on a
 * loopback host (wrangler dev) cannot be `Secure` there, so it goes without the prefix.
 */
export function cookieName(secure: boolean): string {
  return secure ? "__Host-hermes_console" : "hermes_console";
}

/** Whether the cookie for this request's URL must be `Secure` (everywhere but loopback). */
export function secureFor(url: URL): boolean {
  return !isLoopbackHost(url.hostname);
}

function base64url(bytes: Uint8Array): string {
  let s = "";
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/**
 * A new session value `<exp>.<nonce>.<sig>`: the expiry (Unix seconds), 16 random bytes,
 * and the hex HMAC-SHA256 of both under API_TOKEN. The cookie never holds the token
 * itself, and rotating API_TOKEN invalidates every session at once.
 */
export async function issueSession(apiToken: string, nowMs: number): Promise<string> {
  const exp = Math.floor(nowMs / 1000) + SESSION_TTL_SECONDS;
  const nonce = base64url(crypto.getRandomValues(new Uint8Array(16)));
  return `${exp}.${nonce}.${await hmacSha256Hex(apiToken, `${PURPOSE}:${exp}:${nonce}`)}`;
}

/** Whether `value` is a session this API_TOKEN signed that has not expired (signature compared in constant time). */
export async function verifySession(apiToken: string, value: string, nowMs: number): Promise<boolean> {
  const [, expiry, nonce, signature] = /^(\d{1,12})\.([A-Za-z0-9_-]{22})\.([0-9a-f]{64})$/.exec(value) ?? [];
  if (expiry === undefined || nonce === undefined || signature === undefined) return false;
  const exp = Number(expiry);
  if (exp * 1000 <= nowMs || exp * 1000 > nowMs + SESSION_TTL_SECONDS * 1000 + 60_000) return false;
  return safeEqual(signature, await hmacSha256Hex(apiToken, `${PURPOSE}:${expiry}:${nonce}`));
}

/** Domain separation for the per-tab key: a different HMAC under API_TOKEN. */
const TAB_PURPOSE = "hermes-edge console tab v1";

/** The header the console sends its per-tab key in, with the cookie, on every `/v1` request. */
export const TAB_HEADER = "x-hermes-console-tab";

/**
 * The per-tab key of a session value: the HMAC of its nonce under API_TOKEN. Sign-in hands
 * it to the page once (it keeps it in sessionStorage); cookies are not port-scoped, so on
 * loopback every local server the browser visits receives the cookie, but not this key.
 */
export async function tabKey(apiToken: string, sessionValue: string): Promise<string> {
  return hmacSha256Hex(apiToken, `${TAB_PURPOSE}:${sessionValue}`);
}

/** The value of cookie `name` in a `Cookie` header, or null. */
export function readCookie(header: string | null, name: string): string | null {
  if (!header) return null;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return null;
}

/** The `Set-Cookie` value that stores `value` (or, with null, clears the cookie). */
export function sessionCookie(value: string | null, secure: boolean): string {
  const attrs = ["Path=/", "HttpOnly", "SameSite=Strict", ...(secure ? ["Secure"] : []), `Max-Age=${value === null ? 0 : SESSION_TTL_SECONDS}`];
  return `${cookieName(secure)}=${value ?? ""}; ${attrs.join("; ")}`;
}
