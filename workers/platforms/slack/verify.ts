import { hmacSha256Hex, safeEqual } from "../../security.ts";

/** Slack rejects requests whose timestamp is more than this far from now. */
export const SLACK_MAX_SKEW_S = 300;

/**
 * Slack's v0 signature: `v0=` + hex HMAC-SHA256(signing secret, `v0:<ts>:<raw body>`),
 * with the timestamp within five minutes of `nowMs`.
 */
export async function verifySlack(headers: Headers, rawBody: string, signingSecret: string, nowMs: number): Promise<boolean> {
  const ts = headers.get("x-slack-request-timestamp");
  const sig = headers.get("x-slack-signature");
  if (!ts || !sig || !/^\d+$/.test(ts)) return false;
  if (Math.abs(nowMs / 1000 - Number(ts)) > SLACK_MAX_SKEW_S) return false;
  const expected = `v0=${await hmacSha256Hex(signingSecret, `v0:${ts}:${rawBody}`)}`;
  return safeEqual(sig, expected);
}
