/** A link that opens a Signal chat with a phone number (`signal.me/#p/+…`); groups and UUIDs have none. */
export function signalLink(chatId: string, _threadId: string | null): string | null {
  return /^\+\d{5,20}$/.test(chatId) ? `https://signal.me/#p/${chatId}` : null;
}
