import type { PlatformModule } from "../module.ts";
import { TelegramAdapter } from "./index.ts";
import { telegramSetupSteps } from "./setup.ts";

export const telegramPlatform: PlatformModule = {
  build: (v) => new TelegramAdapter({ token: v.TELEGRAM_BOT_TOKEN ?? "", webhookSecret: v.TELEGRAM_WEBHOOK_SECRET ?? "", apiRoot: v.TELEGRAM_API_ROOT }),
  setup: telegramSetupSteps,
};
