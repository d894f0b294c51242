import { settings } from "../settings.ts";
import { PLATFORM_MODULES } from "./all.ts";
import { isPlatformName, type PlatformName } from "./names.ts";
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
