import { settings } from "../settings.ts";
import { PLATFORM_MODULES } from "./all.ts";
import type { ConnectionPorts, PlatformConnection } from "./connection.ts";
import { isPlatformName, PLATFORMS, type PlatformName } from "./names.ts";
import type { PlatformAdapter } from "./types.ts";

const adapters = new WeakMap<object, Map<PlatformName, PlatformAdapter>>();

/**
 * The adapter of an enabled platform (one per isolate); null when its token/secret pair is
 * not set. Building one does no I/O, so a webhook is verified before anything goes out.
 */
export function adapterFor(env: Env, name: string): PlatformAdapter | null {
  if (!isPlatformName(name) || !settings(env).platforms[name].enabled) return null;
  let byName = adapters.get(env);
  if (!byName) adapters.set(env, (byName = new Map()));
  let adapter = byName.get(name);
  if (!adapter) byName.set(name, (adapter = PLATFORM_MODULES[name].build(settings(env).values)));
  return adapter;
}

/**
 * The platform whose messages come over a connection the Worker holds (Discord with
 * `DISCORD_GATEWAY=on`), or null: an enabled platform whose module says its connection is on.
 */
export function connectedPlatform(env: Env): PlatformName | null {
  const s = settings(env);
  return PLATFORMS.find((p) => s.platforms[p].enabled && PLATFORM_MODULES[p].connection?.on(s.values)) ?? null;
}

/** That platform's connection over a host's ports (built by the object that holds it), or null. */
export function gatewayConnection(env: Env, ports: ConnectionPorts): PlatformConnection | null {
  const p = connectedPlatform(env);
  return p ? (PLATFORM_MODULES[p].connection?.open(settings(env).values, ports) ?? null) : null;
}
