/**
 * The relay configuration: the same Worker set up otherwise (Telegram and WhatsApp relayed to
 * gateways with a small relay buffer, Signal bridged, BUSY_POLICY=interrupt, speech-to-text,
 * a daily token budget per platform user, an MCP server's tools), run by the suites in
 * test/worker-relay/ in the worker project's runtime beside the default configuration.
 *
 * A second workerd project for it cost about 7 s of CPU a run (its own runtime, and every module
 * of the Worker loaded and sent again). Here it has storage of its own instead: its own D1
 * database and R2 bucket, and its own namespace for each Durable Object class, whose objects
 * (test/worker/entry.ts) are constructed with this env. Nothing is shared with the default
 * configuration's objects or tables but the isolate.
 */

/** Settings that differ from the worker project's (vitest.config.ts `WORKER_TEST_VARS`). */
export const RELAY_SETTINGS: Record<string, string> = {
  RELAY_PLATFORMS: "telegram,whatsapp",
  RELAY_SECRETS: "gw1:s3cret-a,gw1:s3cret-b,gw2:other-secret,gw3:signal-secret",
  // Signal, bridged by gateway gw3 (test/worker-relay/signal.suite.ts): Alice by UUID, Bob by number.
  BRIDGE_PLATFORMS: "signal:gw3",
  SIGNAL_ALLOWED_USERS: "1a111111-1111-4111-8111-111111111111,+15550001002",
  SIGNAL_ADMIN_USERS: "1a111111-1111-4111-8111-111111111111",
  RELAY_BUFFER_LIMIT: "5",
  BUSY_POLICY: "interrupt",
  DAILY_TOKEN_BUDGET: "50000",
  // U1003: the user who writes in many chats at once against the budget (budget-parallel.suite.ts).
  SLACK_ALLOWED_USERS: "U1001,U1002,U1003,U1021",
  // The fake MCP server every workerd test routes (test/worker/setup.ts).
  MCP_SERVERS: JSON.stringify([{ name: "docs", url: "https://mcp.test/mcp" }]),
  // Voice notes are transcribed here (the default configuration has no speech-to-text).
  LLM_TRANSCRIBE_MODEL: "whisper-test",
};

/** Each storage binding of the Worker, and the binding the relay configuration uses in its place. */
export const RELAY_STORAGE = {
  DB: "RELAY_CONFIG_DB",
  FILES: "RELAY_CONFIG_FILES",
  SESSION_AGENT: "RELAY_CONFIG_SESSION_AGENT",
  INBOX: "RELAY_CONFIG_INBOX",
  RELAY: "RELAY_CONFIG_RELAY",
  SIGN_IN_GUARD: "RELAY_CONFIG_SIGN_IN_GUARD",
  DISCORD_GATEWAY_OBJECT: "RELAY_CONFIG_DISCORD_GATEWAY_OBJECT",
} as const;

/** The relay configuration's Durable Object classes (exported by test/worker/entry.ts), by binding. */
export const RELAY_CLASSES: Record<string, string> = {
  RELAY_CONFIG_SESSION_AGENT: "RelayConfigSessionAgent",
  RELAY_CONFIG_INBOX: "RelayConfigInbox",
  RELAY_CONFIG_RELAY: "RelayConfigRelay",
  RELAY_CONFIG_SIGN_IN_GUARD: "RelayConfigSignInGuard",
  RELAY_CONFIG_DISCORD_GATEWAY_OBJECT: "RelayConfigDiscordGateway",
};

const envs = new WeakMap<object, object>();

/**
 * The env of the relay configuration, made from the runtime's: its settings, and its own storage
 * under the Worker's binding names. One object per runtime env, so what the Worker caches per
 * env (its parsed settings) is the relay configuration's own.
 */
export function relayEnv<E extends object>(base: E): E {
  let env = envs.get(base) as E | undefined;
  if (env === undefined) {
    const all = base as unknown as Record<string, unknown>;
    const storage = Object.fromEntries(Object.entries(RELAY_STORAGE).map(([name, own]) => [name, all[own]]));
    env = { ...all, ...RELAY_SETTINGS, ...storage } as unknown as E;
    envs.set(base, env);
  }
  return env;
}
