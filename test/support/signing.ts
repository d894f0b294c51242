/**
 * Signs webhook deliveries the way each platform does, with test-only keys, so tests
 * exercise the real verification (Web Crypto: works in workerd and Node).
 */

/** A throwaway Ed25519 key pair, for tests only: the Worker under test trusts the public half. */
export const DISCORD_TEST_PUBLIC_KEY = "5b5b10e90ed126f5dd1e292bfcabd9662ab3a27b5b6c879e6827a290427eaed0";
const DISCORD_TEST_PRIVATE_PKCS8 = "302e020100300506032b65700422042059642b158935a6f6a662c203044be9dfbfc055d0072f6d3d4e15f9174b636626";

export const TELEGRAM_TEST = { token: "123456:TEST-TOKEN", secret: "tg-webhook-secret", botId: 123456, username: "hermes_test_bot" };
export const SLACK_TEST = { token: "xoxb-test-token", secret: "slack-signing-secret", team: "T0TEAM", botUserId: "UBOT" };
export const DISCORD_TEST = { applicationId: "5550001", botToken: "discord-bot-token" };
export const WHATSAPP_TEST = {
  token: "EAAG-test-token",
  appSecret: "whatsapp-app-secret",
  verifyToken: "whatsapp-verify-token",
  phoneNumberId: "106540352242922",
  waba: "102290129340398",
};

const hex = (bytes: ArrayBuffer) => [...new Uint8Array(bytes)].map((b) => b.toString(16).padStart(2, "0")).join("");
const unhex = (s: string) => new Uint8Array(s.match(/../g)!.map((h) => parseInt(h, 16)));

/** `prefix` then `body`, as the bytes a platform signs. */
function bytes(prefix: string, body: string | Uint8Array): Uint8Array {
  const head = new TextEncoder().encode(prefix);
  const tail = typeof body === "string" ? new TextEncoder().encode(body) : body;
  const out = new Uint8Array(head.length + tail.length);
  out.set(head);
  out.set(tail, head.length);
  return out;
}

let discordKey: ReturnType<typeof crypto.subtle.importKey> | null = null;

/** Headers of a Discord interaction signed with the test key. */
export async function discordHeaders(body: string | Uint8Array, timestamp = String(Math.floor(Date.now() / 1000))): Promise<Record<string, string>> {
  discordKey ??= crypto.subtle.importKey("pkcs8", unhex(DISCORD_TEST_PRIVATE_PKCS8), { name: "Ed25519" }, false, ["sign"]);
  const sig = await crypto.subtle.sign({ name: "Ed25519" }, await discordKey, bytes(timestamp, body));
  return { "content-type": "application/json", "x-signature-ed25519": hex(sig), "x-signature-timestamp": timestamp };
}

/** Headers of a Slack request signed with `secret` (v0 HMAC-SHA256). */
export async function slackHeaders(
  body: string | Uint8Array,
  secret = SLACK_TEST.secret,
  timestampS = Math.floor(Date.now() / 1000),
  contentType = "application/json",
): Promise<Record<string, string>> {
  const key = await crypto.subtle.importKey("raw", new TextEncoder().encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const sig = await crypto.subtle.sign("HMAC", key, bytes(`v0:${timestampS}:`, body));
  return { "content-type": contentType, "x-slack-request-timestamp": String(timestampS), "x-slack-signature": `v0=${hex(sig)}` };
}

export function telegramHeaders(secret = TELEGRAM_TEST.secret): Record<string, string> {
  return { "content-type": "application/json", "x-telegram-bot-api-secret-token": secret };
}

/** Headers of a WhatsApp Cloud API webhook signed with `secret` (`X-Hub-Signature-256: sha256=<hex>`). */
export async function whatsappHeaders(body: string | Uint8Array, secret = WHATSAPP_TEST.appSecret): Promise<Record<string, string>> {
  const key = await crypto.subtle.importKey("raw", new TextEncoder().encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const sig = await crypto.subtle.sign("HMAC", key, typeof body === "string" ? new TextEncoder().encode(body) : body);
  return { "content-type": "application/json", "x-hub-signature-256": `sha256=${hex(sig)}` };
}

/** The Matrix application service of the tests: its homeserver (a fake), tokens and bot. */
export const MATRIX_TEST = {
  homeserver: "https://matrix.test",
  asToken: "as-token-of-hermes-edge-tests",
  hsToken: "hs-token-of-hermes-edge-tests",
  bot: "@hermes:example.org",
};

/** The headers a homeserver sends with a transaction: `Authorization: Bearer <hs_token>`. */
export function matrixHeaders(token = MATRIX_TEST.hsToken): Record<string, string> {
  return { "content-type": "application/json", authorization: `Bearer ${token}` };
}
