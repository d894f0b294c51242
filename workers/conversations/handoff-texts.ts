/** The synthetic user message of a handoff turn. */
export function handoffNotice(title: string, platform: string): string {
  return `[This session ("${title}") was just handed off from the CLI to this ${platform} chat. The conversation so far is the history above. Confirm briefly that you are here, and summarise where things stand so the user can carry on from this device.]`;
}

/** The name of the thread a handoff opens. */
export function handoffThreadName(title: string): string {
  return `Handoff: ${title}`;
}
