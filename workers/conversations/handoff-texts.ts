/** The synthetic user message of a handoff turn; `from` says where the session was ("the CLI", "Telegram"). */
export function handoffNotice(title: string, platform: string, from = "the CLI"): string {
  return `[This session ("${title}") was just handed off from ${from} to this ${platform} chat. The conversation so far is the history above. Confirm briefly that you are here, and summarise where things stand so the user can carry on from this device.]`;
}

/** The name of the thread a handoff opens. */
export function handoffThreadName(title: string): string {
  return `Handoff: ${title}`;
}

/** Said in the chat a `/handoff` was sent in once the session has moved (the chat is unbound from it now). */
export function movedText(where: string, sessionId: string, url: string | null, prefix: string): string {
  const link = url ? ` (${url})` : "";
  return `This session moved to ${where}${link}. Your next message here starts a new session; ${prefix}resume ${sessionId} brings this one back.`;
}

/** Said in the chat a `/handoff` was sent in when the session was parked for the operator's CLI. */
export function parkedText(sessionId: string, prefix: string): string {
  return `This session is parked for the operator's CLI: hermes-edge chat offers it there (or hermes-edge chat --resume ${sessionId}). Your next message here starts a new session; ${prefix}resume ${sessionId} brings this one back.`;
}

/** Said in the chat a `/handoff` was sent in when it failed: nothing moved. */
export function handoffFailedText(where: string, reason: string): string {
  return `The handoff to ${where} failed: ${reason}. The session stays here.`;
}
