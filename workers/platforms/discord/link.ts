/** Discord channel links need the server's id, which a handoff destination does not carry: none. */
export function discordLink(_chatId: string, _threadId: string | null): string | null {
  return null;
}
