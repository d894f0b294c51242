import { Hono } from "hono";
import { homeChannel } from "../conversations/home.ts";
import { PLATFORMS } from "../platforms/names.ts";
import { settings } from "../settings.ts";

/**
 * `GET /v1/platforms`: each platform's state, the settings it still lacks (`missing`), and
 * the command that points it at this Worker (`setup`), for people setting it up; and the
 * settings whose values were not understood (`setting_problems`, as in `GET /v1/status`),
 * which the console shows without the platform round trips `/v1/status` makes.
 */
export const platformRoutes = new Hono<{ Bindings: Env }>().get("/", async (c) => {
  const s = settings(c.env);
  const origin = new URL(c.req.url).origin;
  const platforms = await Promise.all(
    PLATFORMS.map(async (name) => {
      const home = await homeChannel(c.env, name);
      return {
        name,
        enabled: s.platforms[name].enabled,
        relay: s.platforms[name].gateway !== null,
        home_channel: home ? { chat_id: home.chat_id, thread_id: home.thread_id, source: home.source } : null,
        missing: s.platforms[name].missing,
        setup: `npx hermes-edge setup ${name} --url ${origin}`,
      };
    }),
  );
  return c.json({ platforms, setting_problems: s.problems });
});
