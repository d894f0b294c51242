/** A link that opens a Slack channel in the user's own workspace (threads need the workspace's domain, which the Worker does not know). */
export function slackLink(chatId: string, _threadId: string | null): string | null {
  return /^[CDG][A-Z0-9]{2,20}$/.test(chatId) ? `https://slack.com/app_redirect?channel=${chatId}` : null;
}
