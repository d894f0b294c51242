import { Hono } from "hono";
import { PLATFORMS, type PlatformName } from "../config.ts";
import { db } from "../db/client.ts";
import { storedHome } from "../db/platform-state.ts";
import { platformSettings } from "../platforms/registry.ts";
import { isRelayed } from "../relay/config.ts";

/** A platform's home channel: set by /sethome (D1), else the env default. */
export async function homeChannel(env: Env, name: PlatformName) {
  const stored = await storedHome(db(env), name);
  if (stored) return { chat_id: stored.chatId, thread_id: stored.threadId, source: "sethome" as const };
  const fromEnv = platformSettings(env, name).envHome;
  return fromEnv ? { chat_id: fromEnv.chatId, thread_id: fromEnv.threadId, source: "env" as const } : null;
}

/** `GET /v1/platforms`. */
export const platformRoutes = new Hono<{ Bindings: Env }>().get("/", async (c) => {
  const platforms = await Promise.all(
    PLATFORMS.map(async (name) => {
      const s = platformSettings(c.env, name);
      return { name, enabled: s.enabled, relay: isRelayed(c.env, name), home_channel: await homeChannel(c.env, name) };
    }),
  );
  return c.json({ platforms });
});
