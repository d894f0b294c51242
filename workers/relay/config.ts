import { list, setting, type PlatformName } from "../config.ts";
import { db } from "../db/client.ts";
import { relayRoutes } from "../db/schema.ts";
import { eq } from "drizzle-orm";
import { parseRelaySecrets } from "./token.ts";

/** Platforms whose turns run on a relay gateway, when at least one gateway is configured. */
export function relayedPlatforms(env: Env): PlatformName[] {
  if (parseRelaySecrets(setting(env.RELAY_SECRETS)).size === 0) return [];
  return list(env.RELAY_PLATFORMS)
    .map((p) => p.toLowerCase())
    .filter((p): p is PlatformName => p === "telegram" || p === "discord" || p === "slack");
}

export function isRelayed(env: Env, platform: PlatformName): boolean {
  return relayedPlatforms(env).includes(platform);
}

/** Gateway lookups are cached this long per isolate (a gateway changes rarely). */
const GATEWAY_CACHE_MS = 10_000;
const gatewayCache = new Map<PlatformName, { id: string; until: number }>();

/**
 * The gateway that serves a relayed platform: the one whose hello for it was answered last,
 * else the first gateway id in RELAY_SECRETS (messages wait in its buffer until it connects).
 */
export async function gatewayFor(env: Env, platform: PlatformName, now = Date.now()): Promise<string> {
  const ids = [...parseRelaySecrets(setting(env.RELAY_SECRETS)).keys()];
  const cached = gatewayCache.get(platform);
  if (cached && cached.until > now && ids.includes(cached.id)) return cached.id;
  const row = await db(env).select({ gatewayId: relayRoutes.gatewayId }).from(relayRoutes).where(eq(relayRoutes.platform, platform)).get();
  const id = row && ids.includes(row.gatewayId) ? row.gatewayId : ids[0]!;
  gatewayCache.set(platform, { id, until: now + GATEWAY_CACHE_MS });
  return id;
}

export async function recordGatewayFor(env: Env, platform: PlatformName, gatewayId: string, now = Date.now()): Promise<void> {
  gatewayCache.set(platform, { id: gatewayId, until: now + GATEWAY_CACHE_MS });
  await db(env)
    .insert(relayRoutes)
    .values({ platform, gatewayId, updatedAt: now })
    .onConflictDoUpdate({ target: relayRoutes.platform, set: { gatewayId, updatedAt: now } });
}

/** The Relay object of one gateway. */
export function relayObject(env: Env, gatewayId: string) {
  return env.RELAY.get(env.RELAY.idFromName(gatewayId));
}
