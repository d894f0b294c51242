import type { PlatformInfo } from "../info.ts";
import { telegramLink } from "./link.ts";

export const telegramInfo = {
  name: "telegram",
  label: "Telegram",
  threadWord: "topic",
  required: ["TELEGRAM_BOT_TOKEN", "TELEGRAM_WEBHOOK_SECRET"],
  homeThread: "TELEGRAM_HOME_CHANNEL_THREAD_ID",
  sdk: "grammy",
  setupHelp: "checks TELEGRAM_BOT_TOKEN, sets the webhook to <url>/webhooks/telegram\nwith TELEGRAM_WEBHOOK_SECRET, and reports what Telegram then sees",
  link: telegramLink,
} as const satisfies PlatformInfo<"telegram">;
