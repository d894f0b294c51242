import { concatBytes, hmacSha256Hex, safeEqual } from "../../security.ts";
import type { Verification } from "../types.ts";

/** Slack rejects requests whose timestamp is more than this far from now. */
export const SLACK_MAX_SKEW_S = 300;

/**
 * Slack's v0 signature: `v0=` + hex HMAC-SHA256(signing secret, `v0:<ts>:<raw body>`) over
 * the body's bytes as sent, with the timestamp within five minutes of `nowMs`.
 */
export async function verifySlack(headers: Headers, rawBody: Uint8Array, signingSecret: string, nowMs: number): Promise<Verification> {
  const ts = headers.get("x-slack-request-timestamp");
  const sig = headers.get("x-slack-signature");
  if (!ts || !sig) return { ok: false, reason: "missing" };
  if (!/^\d{1,12}$/.test(ts)) return { ok: false, reason: "bad_signature" };
  const expected = `v0=${await hmacSha256Hex(signingSecret, concatBytes(`v0:${ts}:`, rawBody))}`;
  if (!(await safeEqual(sig, expected))) return { ok: false, reason: "bad_signature" };
  if (Math.abs(nowMs / 1000 - Number(ts)) > SLACK_MAX_SKEW_S) return { ok: false, reason: "stale" };
  return { ok: true };
}
