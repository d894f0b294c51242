import { logger } from "../log/index.ts";
import type { ConnectionStatus } from "../platforms/connection.ts";
import { connectedPlatform } from "../platforms/registry.ts";
import { discordGateway } from "./stubs.ts";

/**
 * The connection a platform's messages come over, where the Worker holds one (Discord's
 * Gateway with `DISCORD_GATEWAY=on`): its status for `/v1/status`, `/v1/platforms` and the
 * console; null for every other platform. Reading it connects nothing.
 */
export async function connectionStatus(env: Env, platform: string): Promise<ConnectionStatus | null> {
  if (platform !== connectedPlatform(env)) return null;
  try {
    const s = await discordGateway(env).status();
    return s.state === "off" ? null : s;
  } catch (err) {
    logger.child(platform).warn("the Gateway object did not answer", { err });
    return null;
  }
}

/** Wakes the connection (connects it if it is down, re-arms its watch alarm): the cron, and each isolate's first request. */
export async function ensureConnection(env: Env): Promise<void> {
  if (connectedPlatform(env) === null) return;
  await discordGateway(env).ensure();
}
