import { safeEqual } from "../../security.ts";

/** The header Telegram sends with the `secret_token` given to setWebhook. */
export const SECRET_HEADER = "x-telegram-bot-api-secret-token";

/** True when the request carries the webhook secret (compared in constant time). */
export async function verifyTelegram(headers: Headers, secret: string): Promise<boolean> {
  const got = headers.get(SECRET_HEADER);
  if (got === null || got === "") return false;
  return safeEqual(got, secret);
}
