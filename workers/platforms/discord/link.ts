/** Discord channel links need the server's id, which a chat id alone does not carry: none. */
export function discordLink(_chatId: string, _threadId: string | null): string | null {
  return null;
}

/** A thread's link, from the server id Discord's answer to creating it carries (snowflakes only). */
export function discordThreadLink(guildId: string | undefined, threadId: string): string | null {
  return guildId && /^\d{1,25}$/.test(guildId) && /^\d{1,25}$/.test(threadId) ? `https://discord.com/channels/${guildId}/${threadId}` : null;
}
