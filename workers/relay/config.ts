import { isPlatformName, list, setting, type PlatformName } from "../config.ts";
import { parseRelaySecrets } from "./token.ts";

/**
 * Which gateway serves each relayed platform, from config only (never from a frame):
 * `RELAY_PLATFORMS` entries are `platform` (served by the first gateway id in
 * RELAY_SECRETS) or `platform:gatewayId`. Entries naming an unknown gateway are ignored.
 */
export function relayAssignments(env: Env): Map<PlatformName, string> {
  const ids = [...parseRelaySecrets(setting(env.RELAY_SECRETS)).keys()];
  const out = new Map<PlatformName, string>();
  if (ids.length === 0) return out;
  for (const entry of list(env.RELAY_PLATFORMS)) {
    const at = entry.indexOf(":");
    const platform = (at < 0 ? entry : entry.slice(0, at)).trim().toLowerCase();
    const gateway = at < 0 ? ids[0]! : entry.slice(at + 1).trim();
    if (isPlatformName(platform) && ids.includes(gateway)) out.set(platform, gateway);
  }
  return out;
}

export function isRelayed(env: Env, platform: PlatformName): boolean {
  return relayAssignments(env).has(platform);
}

/** The gateway that serves a relayed platform (messages wait in its buffer while it is away). */
export function gatewayFor(env: Env, platform: PlatformName): string | null {
  return relayAssignments(env).get(platform) ?? null;
}

/** The Relay object of one gateway. */
export function relayObject(env: Env, gatewayId: string) {
  return env.RELAY.get(env.RELAY.idFromName(gatewayId));
}
