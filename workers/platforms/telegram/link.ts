/**
 * A link people can open to a Telegram chat or forum topic: supergroups and channels
 * (ids `-100…`) have `t.me/c/<id>/<topic>` links; private chats and basic groups have none.
 */
export function telegramLink(chatId: string, threadId: string | null): string | null {
  const m = /^-100(\d{1,20})$/.exec(chatId);
  if (!m) return null;
  return threadId && /^\d{1,20}$/.test(threadId) ? `https://t.me/c/${m[1]}/${threadId}` : `https://t.me/c/${m[1]}`;
}
