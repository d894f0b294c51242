import { safeEqual } from "../security.ts";
import { cookieName, readCookie, secureFor, TAB_HEADER, tabKey, verifySession } from "./cookie.ts";

/**
 * Whether the request carries a valid console session cookie for this API_TOKEN and, with
 * it, that session's per-tab key in the TAB_HEADER header (compared in constant time).
 */
export async function consoleSignedIn(req: Request, apiToken: string, nowMs: number): Promise<boolean> {
  const value = readCookie(req.headers.get("cookie"), cookieName(secureFor(new URL(req.url))));
  if (value === null || !(await verifySession(apiToken, value, nowMs))) return false;
  return safeEqual(req.headers.get(TAB_HEADER) ?? "", await tabKey(apiToken, value));
}

/**
 * Whether the request's `Origin` is the Worker's own. Browsers send it on every cross-site
 * request and on same-origin ones that are not GET/HEAD, so a missing one is refused too.
 */
export function sameOrigin(req: Request): boolean {
  const origin = req.headers.get("origin");
  return origin !== null && origin === new URL(req.url).origin;
}
