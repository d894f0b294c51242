import { db } from "../db/client.ts";
import { storedHome } from "../db/platform-state.ts";
import { adminUsersSetting, type PlatformName } from "../platforms/names.ts";
import { isAllowed, settings } from "../settings.ts";

/** Where a platform's handoffs go. */
export interface HomeChannel {
  chat_id: string;
  thread_id: string | null;
  /** `sethome`: set in a chat; `env`: the `*_HOME_CHANNEL` default. */
  source: "sethome" | "env";
  /** Who sent /sethome (null: from env). */
  set_by: string | null;
  /** When /sethome was sent, epoch ms (null: from env). */
  set_at: number | null;
}

/** A platform's home channel: set by /sethome (D1), else the env default. */
export async function homeChannel(env: Env, name: PlatformName): Promise<HomeChannel | null> {
  const stored = await storedHome(db(env), name);
  if (stored) return { chat_id: stored.chatId, thread_id: stored.threadId, source: "sethome", set_by: stored.setBy, set_at: stored.updatedAt };
  const fromEnv = settings(env).platforms[name].envHome;
  return fromEnv ? { chat_id: fromEnv.chatId, thread_id: fromEnv.threadId, source: "env", set_by: null, set_at: null } : null;
}

/** May this platform user set the home channel? Only `*_ADMIN_USERS`: it decides where every operator handoff goes. */
export function maySetHome(env: Env, name: PlatformName, userId: string): boolean {
  return isAllowed(settings(env).platforms[name].admins, userId);
}

/**
 * Why a handoff must not go to this home channel, or null. A home stored by /sethome from
 * someone who is not (or no longer) in `*_ADMIN_USERS` (set before /sethome was admin-only,
 * or an admin since removed) would hand the operator's CLI session, history and all, to
 * that user's chat.
 */
export function homeRefusal(env: Env, name: PlatformName, home: HomeChannel): string | null {
  if (home.source !== "sethome" || (home.set_by !== null && maySetHome(env, name, home.set_by))) return null;
  return `the ${name} home channel was set by user ${home.set_by ?? "unknown"}, who is not in ${adminUsersSetting(name)}: an admin must send /sethome in the destination chat (or pass chat_id)`;
}
