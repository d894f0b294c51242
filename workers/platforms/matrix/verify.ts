import { safeEqual } from "../../security.ts";
import type { Verification } from "../types.ts";

/** The legacy query parameter older homeservers send the hs_token in. */
export const LEGACY_TOKEN_PARAM = "access_token";

/**
 * The homeserver's proof (spec "Application Service API: Authorization"): `Authorization:
 * Bearer <hs_token>`, or the legacy `?access_token=`; when both are present they must both be
 * the token. Compared in constant time; never looks at the body.
 */
export async function verifyMatrix(headers: Headers, query: URLSearchParams, hsToken: string): Promise<Verification> {
  const auth = headers.get("authorization");
  const fromQuery = query.getAll(LEGACY_TOKEN_PARAM);
  if (auth === null && fromQuery.length === 0) return { ok: false, reason: "missing" };
  if (fromQuery.length > 1 || hsToken === "") return { ok: false, reason: "bad_signature" };
  const given: string[] = [...fromQuery];
  if (auth !== null) {
    const m = /^Bearer ([\x21-\x7E]{1,1024})$/i.exec(auth.trim());
    if (!m?.[1]) return { ok: false, reason: "bad_signature" };
    given.push(m[1]);
  }
  // Every token given is compared (no early exit on the first): all must be the hs_token.
  const checks = await Promise.all(given.map((t) => safeEqual(t, hsToken)));
  return checks.every(Boolean) ? { ok: true } : { ok: false, reason: "bad_signature" };
}
