/**
 * Relay gateway tokens (SPEC section 6): unpadded base64url of `<gatewayId>:<exp>:<hexsig>`,
 * hexsig = hex HMAC-SHA256(secret, `<gatewayId>:<exp>`), exp in Unix seconds. The connector
 * accepts only tokens that expire within 10 minutes, each once.
 * Shared by the connector (Worker) and the gateway (Node): Web Crypto only.
 */

import { safeEqual } from "../security.ts";

const encoder = new TextEncoder();

function toHex(buf: ArrayBuffer): string {
  return [...new Uint8Array(buf)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

async function hmacHex(secret: string, message: string): Promise<string> {
  const key = await crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return toHex(await crypto.subtle.sign("HMAC", key, encoder.encode(message)));
}

function base64url(text: string): string {
  const bytes = encoder.encode(text);
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function fromBase64url(s: string): string | null {
  if (!/^[A-Za-z0-9_-]*$/.test(s)) return null;
  try {
    const bin = atob(s.replace(/-/g, "+").replace(/_/g, "/") + "===".slice((s.length + 3) % 4));
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(Uint8Array.from(bin, (c) => c.charCodeAt(0)));
  } catch {
    return null;
  }
}

/** A token for `gatewayId`, valid until `exp` (Unix seconds). */
export async function mintRelayToken(gatewayId: string, secret: string, exp: number): Promise<string> {
  const body = `${gatewayId}:${exp}`;
  return base64url(`${body}:${await hmacHex(secret, body)}`);
}

/** `RELAY_SECRETS`: comma list of `gatewayId:secret` (several per id, for rotation). */
export function parseRelaySecrets(value: string | undefined): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const item of (value ?? "").split(",")) {
    const at = item.indexOf(":");
    if (at <= 0) continue;
    const id = item.slice(0, at).trim();
    const secret = item.slice(at + 1).trim();
    if (!id || !secret) continue;
    out.set(id, [...(out.get(id) ?? []), secret]);
  }
  return out;
}

/** Longest lifetime a token may claim: a captured token is worth at most this long. */
export const MAX_TOKEN_LIFETIME_S = 600;

export type TokenCheck =
  | { ok: true; gatewayId: string; exp: number; sig: string }
  | { ok: false; reason: "malformed" | "unknown" | "bad_signature" | "expired" | "no_expiry" | "too_long" };

/**
 * Checks a bearer token against the secrets configured for its gateway id. The signature
 * is checked before the expiry, so "expired" is only said to a holder of a real secret.
 * Tokens must be short-lived: `exp=0` (never) and an expiry more than
 * {@link MAX_TOKEN_LIFETIME_S} ahead are refused. Single use is the Relay object's check
 * (it remembers the `sig` of every token it accepted until the token expires).
 */
export async function verifyRelayToken(token: string, secrets: Map<string, string[]>, nowS: number): Promise<TokenCheck> {
  const text = fromBase64url(token.trim());
  if (!text) return { ok: false, reason: "malformed" };
  const m = /^(.+):(\d+):([0-9a-f]{64})$/.exec(text);
  if (!m) return { ok: false, reason: "malformed" };
  const [, gatewayId, expText, sig] = m as unknown as [string, string, string, string];
  const candidates = secrets.get(gatewayId);
  if (!candidates || candidates.length === 0) return { ok: false, reason: "unknown" };
  let matched = false;
  for (const secret of candidates) {
    if (await safeEqual(await hmacHex(secret, `${gatewayId}:${expText}`), sig)) matched = true;
  }
  if (!matched) return { ok: false, reason: "bad_signature" };
  const exp = Number(expText);
  if (exp === 0) return { ok: false, reason: "no_expiry" };
  if (exp < nowS) return { ok: false, reason: "expired" };
  if (exp > nowS + MAX_TOKEN_LIFETIME_S) return { ok: false, reason: "too_long" };
  return { ok: true, gatewayId, exp, sig };
}
