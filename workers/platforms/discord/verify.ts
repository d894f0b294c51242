import { verifyKey } from "discord-interactions";
import type { Verification } from "../types.ts";

/**
 * Discord signed requests are accepted this far from now (as Slack's are): an old signed
 * interaction replayed later is refused even once its delivery id has been pruned.
 */
export const DISCORD_MAX_SKEW_S = 300;

/**
 * Ed25519 over timestamp + raw body (`X-Signature-Ed25519`, `X-Signature-Timestamp`), with
 * the signed timestamp within {@link DISCORD_MAX_SKEW_S} of `nowMs`.
 */
export async function verifyDiscord(headers: Headers, rawBody: Uint8Array, publicKeyHex: string, nowMs: number): Promise<Verification> {
  const signature = headers.get("x-signature-ed25519");
  const timestamp = headers.get("x-signature-timestamp");
  if (!signature || !timestamp) return { ok: false, reason: "missing" };
  if (!/^[0-9a-f]{128}$/i.test(signature) || !/^\d{1,12}$/.test(timestamp)) return { ok: false, reason: "bad_signature" };
  let valid = false;
  try {
    valid = await verifyKey(rawBody, signature, timestamp, publicKeyHex);
  } catch {
    valid = false;
  }
  if (!valid) return { ok: false, reason: "bad_signature" };
  // Checked after the signature, so "stale" is only said of a genuinely signed request.
  if (Math.abs(nowMs / 1000 - Number(timestamp)) > DISCORD_MAX_SKEW_S) return { ok: false, reason: "stale" };
  return { ok: true };
}
