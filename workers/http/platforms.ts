import { Hono } from "hono";
import { isLoopbackHost } from "../agent/loopback.ts";
import { connectionStatus } from "../conversations/connections.ts";
import { homeChannel, homeRefusal } from "../conversations/home.ts";
import { allowedUsersSetting, describeHandoffDestination, PLATFORMS } from "../platforms/names.ts";
import { settingKind } from "../settings/catalog.ts";
import { settings } from "../settings.ts";

/**
 * `GET /v1/platforms`: each platform's state, the settings it still lacks (`missing`, and
 * `missing_settings` with how each is declared: secret or var), whether its
 * `*_ALLOWED_USERS` is set (without it nobody may talk), and the command that points it at
 * this Worker (`setup`), for people setting it up. `worker.local`: the request reached the
 * Worker on a loopback host (`npm start`, `npm run dev`), where settings go in `.dev.vars`
 * and platforms need a tunnel to reach it.
 * The settings whose values were not understood (`setting_problems`, as in `GET /v1/status`),
 * which the console shows without the platform round trips `/v1/status` makes.
 */
export const platformRoutes = new Hono<{ Bindings: Env }>().get("/", async (c) => {
  const s = settings(c.env);
  const url = new URL(c.req.url);
  const origin = url.origin;
  const platforms = await Promise.all(
    PLATFORMS.map(async (name) => {
      const home = await homeChannel(c.env, name);
      const p = s.platforms[name];
      return {
        name,
        enabled: p.enabled,
        relay: p.gateway !== null,
        // Who set it and when, and where a handoff (in a fresh thread) lands: shown before one is
        // queued. `refused`: why handoffs may not go there (set by someone not in *_ADMIN_USERS).
        home_channel: home
          ? {
              chat_id: home.chat_id,
              thread_id: home.thread_id,
              source: home.source,
              set_by: home.set_by,
              set_at: home.set_at,
              handoff_to: describeHandoffDestination(name, home, { thread: true }),
              refused: homeRefusal(c.env, name, home),
            }
          : null,
        missing: p.missing,
        missing_settings: p.missing.map((setting) => ({ name: setting, kind: settingKind(setting) })),
        allowed_users: { setting: allowedUsersSetting(name), set: p.allowed.kind !== "none" },
        setup: `npx hermes-edge setup ${name} --url ${origin}`,
        // Discord's Gateway with DISCORD_GATEWAY=on: connected since, last ACK, resumes, last close code.
        connection: await connectionStatus(c.env, name),
      };
    }),
  );
  return c.json({ platforms, worker: { origin, local: isLoopbackHost(url.hostname) }, setting_problems: s.problems });
});
