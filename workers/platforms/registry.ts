import { setting, settings } from "../settings.ts";
import { DiscordAdapter } from "./discord/index.ts";
import { isPlatformName, type PlatformName } from "./names.ts";
import { SlackAdapter } from "./slack/index.ts";
import { TelegramAdapter } from "./telegram/index.ts";
import type { PlatformAdapter } from "./types.ts";

const adapters = new WeakMap<object, Map<PlatformName, PlatformAdapter>>();

function build(env: Env, name: PlatformName): PlatformAdapter {
  switch (name) {
    case "telegram":
      return new TelegramAdapter({ token: setting(env.TELEGRAM_BOT_TOKEN)!, webhookSecret: setting(env.TELEGRAM_WEBHOOK_SECRET)!, apiRoot: setting(env.TELEGRAM_API_ROOT) ?? "https://api.telegram.org" });
    case "discord":
      return new DiscordAdapter({ applicationId: setting(env.DISCORD_APPLICATION_ID) ?? "", publicKey: setting(env.DISCORD_PUBLIC_KEY)!, botToken: setting(env.DISCORD_BOT_TOKEN), apiBase: setting(env.DISCORD_API_BASE) ?? "https://discord.com/api/v10" });
    case "slack":
      return new SlackAdapter({ botToken: setting(env.SLACK_BOT_TOKEN)!, signingSecret: setting(env.SLACK_SIGNING_SECRET)!, apiUrl: setting(env.SLACK_API_URL) ?? "https://slack.com/api/" });
  }
}

/**
 * The adapter of an enabled platform (one per isolate); null when its token/secret pair is
 * not set. Building one does no I/O, so a webhook is verified before anything goes out.
 */
export function adapterFor(env: Env, name: string): PlatformAdapter | null {
  if (!isPlatformName(name) || !settings(env).platforms[name].enabled) return null;
  let byName = adapters.get(env);
  if (!byName) adapters.set(env, (byName = new Map()));
  let adapter = byName.get(name);
  if (!adapter) byName.set(name, (adapter = build(env, name)));
  return adapter;
}
