import { Hono } from "hono";
import { homeChannel, homeRefusal } from "../conversations/home.ts";
import { describeHandoffDestination, PLATFORMS } from "../platforms/names.ts";
import { settings } from "../settings.ts";

/**
 * `GET /v1/platforms`: each platform's state, the settings it still lacks (`missing`), and
 * the command that points it at this Worker (`setup`), for people setting it up.
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
        // Who set it and when, and where a handoff (in a fresh thread) lands: shown before one is
        // queued. `refused`: why handoffs may not go there (set by someone not in *_ADMIN_USERS).
        home_channel: home
          ? { chat_id: home.chat_id, thread_id: home.thread_id, source: home.source, set_by: home.set_by, set_at: home.set_at, handoff_to: describeHandoffDestination(name, home, { thread: true }), refused: homeRefusal(c.env, name, home) }
          : null,
        missing: s.platforms[name].missing,
        setup: `npx hermes-edge setup ${name} --url ${origin}`,
      };
    }),
  );
  return c.json({ platforms });
});
