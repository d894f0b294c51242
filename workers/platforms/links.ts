import { discordLink } from "./discord/link.ts";
import { matrixLink } from "./matrix/link.ts";
import { isPlatformName, type PlatformName } from "./names.ts";
import { slackLink } from "./slack/link.ts";
import { telegramLink } from "./telegram/link.ts";
import { whatsappLink } from "./whatsapp/link.ts";

const LINKS: Record<PlatformName, (chatId: string, threadId: string | null) => string | null> = {
  telegram: telegramLink,
  discord: discordLink,
  slack: slackLink,
  whatsapp: whatsappLink,
  matrix: matrixLink,
};

/**
 * A web link to a chat (and thread) on its platform, for people (the console's handoff
 * destination), or null when the platform has none. Pure: no settings, no I/O.
 */
export function chatLink(platform: string, chatId: string, threadId: string | null): string | null {
  return isPlatformName(platform) ? LINKS[platform](chatId, threadId) : null;
}
