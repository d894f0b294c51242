/**
 * The one place that makes Durable Object stubs, each by its name (`getByName()`): the
 * object reads the name as `ctx.id.name` (durable-objects/name.ts), so no method takes the
 * id its stub was made from. Which object owns what:
 * - `SessionAgent`, one per session id: the session's turns, transcript and handoff;
 * - `Inbox`, one per session key (a chat, thread or user in a chat): platform deliveries
 *   taken in once, in order, and which session the key is bound to;
 * - `Relay`, one per gateway id: a relay gateway's socket and its buffered messages.
 * - `SignInGuard`, one per client address: the web console's failed sign-ins from there.
 * - `DiscordGateway`, one per bot (`DISCORD_GATEWAY=on`): Discord's Gateway socket.
 *
 * `getByName(name)` reaches the same object as `get(idFromName(name))` did: objects made
 * before keep their storage.
 */

export function sessionAgent(env: Env, sessionId: string) {
  return env.SESSION_AGENT.getByName(sessionId);
}

export function inbox(env: Env, sessionKey: string) {
  return env.INBOX.getByName(sessionKey);
}

export function relayObject(env: Env, gatewayId: string) {
  return env.RELAY.getByName(gatewayId);
}

/** The name of the Inbox that rate-limits refusals in one chat. */
export function refusalKey(platform: string, chatId: string): string {
  return `refusals:${platform}:${chatId}`;
}

/** The SignInGuard counting failed console sign-ins of one client (its `clientKey`). */
export function signInGuard(env: Env, client: string) {
  return env.SIGN_IN_GUARD.getByName(client);
}

/** The one DiscordGateway object (one bot per Worker). */
export function discordGateway(env: Env) {
  return env.DISCORD_GATEWAY_OBJECT.getByName("bot");
}
