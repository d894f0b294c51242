import { isPlatformName, PLATFORM_INFO } from "./names.ts";

/**
 * A web link to a chat (and thread) on its platform, for people (the console's handoff
 * destination), or null when the platform has none. Pure: no settings, no I/O.
 */
export function chatLink(platform: string, chatId: string, threadId: string | null): string | null {
  return isPlatformName(platform) ? PLATFORM_INFO[platform].link(chatId, threadId) : null;
}
