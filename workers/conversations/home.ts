import { db } from "../db/client.ts";
import { storedHome } from "../db/platform-state.ts";
import type { PlatformName } from "../platforms/names.ts";
import { settings } from "../settings.ts";

/** Where a platform's handoffs go. */
export interface HomeChannel {
  chat_id: string;
  thread_id: string | null;
  /** `sethome`: set in a chat; `env`: the `*_HOME_CHANNEL` default. */
  source: "sethome" | "env";
  set_by: string | null;
}

/** A platform's home channel: set by /sethome (D1), else the env default. */
export async function homeChannel(env: Env, name: PlatformName): Promise<HomeChannel | null> {
  const stored = await storedHome(db(env), name);
  if (stored) return { chat_id: stored.chatId, thread_id: stored.threadId, source: "sethome", set_by: stored.setBy };
  const fromEnv = settings(env).platforms[name].envHome;
  return fromEnv ? { chat_id: fromEnv.chatId, thread_id: fromEnv.threadId, source: "env", set_by: null } : null;
}
