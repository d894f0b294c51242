import { discordPlatform } from "./discord/platform.ts";
import { matrixPlatform } from "./matrix/platform.ts";
import type { PlatformModule } from "./module.ts";
import type { PlatformName } from "./names.ts";
import { slackPlatform } from "./slack/platform.ts";
import { telegramPlatform } from "./telegram/platform.ts";
import { whatsappPlatform } from "./whatsapp/platform.ts";

/**
 * Each platform's adapter and setup, by name: the second of the two lists a new platform
 * joins (the first is `names.ts`; tsc names this one when it is missing).
 */
export const PLATFORM_MODULES: Record<PlatformName, PlatformModule> = {
  telegram: telegramPlatform,
  discord: discordPlatform,
  slack: slackPlatform,
  whatsapp: whatsappPlatform,
  matrix: matrixPlatform,
};
