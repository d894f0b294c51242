import { safeEqual } from "../../security.ts";
import type { Verification } from "../types.ts";

/** The header Telegram sends with the `secret_token` given to setWebhook. */
export const SECRET_HEADER = "x-telegram-bot-api-secret-token";

/** The request carries the webhook secret (compared in constant time). */
export async function verifyTelegram(headers: Headers, secret: string): Promise<Verification> {
  const got = headers.get(SECRET_HEADER);
  if (got === null || got === "") return { ok: false, reason: "missing" };
  return (await safeEqual(got, secret)) ? { ok: true } : { ok: false, reason: "bad_signature" };
}
