/** A link that opens a WhatsApp chat with a number (`wa.me/<digits>`); WhatsApp has no threads. */
export function whatsappLink(chatId: string, _threadId: string | null): string | null {
  return /^\d{5,20}$/.test(chatId) ? `https://wa.me/${chatId}` : null;
}
