import { allowList, isPlatformName, setting, type AllowList, type PlatformName } from "../config.ts";
import { DiscordAdapter } from "./discord/index.ts";
import { SlackAdapter } from "./slack/index.ts";
import { TelegramAdapter } from "./telegram/index.ts";
import type { PlatformAdapter } from "./types.ts";

/** A platform's settings from `env`, whether or not it is enabled. */
export interface PlatformSettings {
  name: PlatformName;
  /** Its token/secret pair is set. */
  enabled: boolean;
  /** Which names are missing, for error messages. */
  missing: string[];
  allowed: AllowList;
  /** Who may also `/resume` CLI sessions (`*_ADMIN_USERS`; unset: nobody). */
  admins: AllowList;
  /** The home channel from env (a /sethome in D1 overrides it). */
  envHome: { chatId: string; threadId: string | null } | null;
}

function required(env: Env, names: Array<keyof Env>): string[] {
  return names.filter((n) => !setting(env[n] as string | undefined)) as string[];
}

export function platformSettings(env: Env, name: PlatformName): PlatformSettings {
  switch (name) {
    case "telegram": {
      const missing = required(env, ["TELEGRAM_BOT_TOKEN", "TELEGRAM_WEBHOOK_SECRET"]);
      const home = setting(env.TELEGRAM_HOME_CHANNEL);
      return { name, enabled: missing.length === 0, missing, allowed: allowList(env.TELEGRAM_ALLOWED_USERS), admins: allowList(env.TELEGRAM_ADMIN_USERS), envHome: home ? { chatId: home, threadId: setting(env.TELEGRAM_HOME_CHANNEL_THREAD_ID) ?? null } : null };
    }
    case "discord": {
      const missing = required(env, ["DISCORD_BOT_TOKEN", "DISCORD_PUBLIC_KEY"]);
      const home = setting(env.DISCORD_HOME_CHANNEL);
      return { name, enabled: missing.length === 0, missing, allowed: allowList(env.DISCORD_ALLOWED_USERS), admins: allowList(env.DISCORD_ADMIN_USERS), envHome: home ? { chatId: home, threadId: null } : null };
    }
    case "slack": {
      const missing = required(env, ["SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET"]);
      const home = setting(env.SLACK_HOME_CHANNEL);
      return { name, enabled: missing.length === 0, missing, allowed: allowList(env.SLACK_ALLOWED_USERS), admins: allowList(env.SLACK_ADMIN_USERS), envHome: home ? { chatId: home, threadId: null } : null };
    }
  }
}

/**
 * The adapter of an enabled platform; null when its token/secret pair is not set.
 * Building one does no I/O, so a webhook is verified before anything goes out.
 */
export function adapterFor(env: Env, name: string): PlatformAdapter | null {
  if (!isPlatformName(name) || !platformSettings(env, name).enabled) return null;
  switch (name) {
    case "telegram":
      return new TelegramAdapter({
        token: setting(env.TELEGRAM_BOT_TOKEN)!,
        webhookSecret: setting(env.TELEGRAM_WEBHOOK_SECRET)!,
        apiRoot: setting(env.TELEGRAM_API_ROOT) ?? "https://api.telegram.org",
      });
    case "discord":
      return new DiscordAdapter({
        applicationId: setting(env.DISCORD_APPLICATION_ID) ?? "",
        publicKey: setting(env.DISCORD_PUBLIC_KEY)!,
        botToken: setting(env.DISCORD_BOT_TOKEN),
        apiBase: setting(env.DISCORD_API_BASE) ?? "https://discord.com/api/v10",
      });
    case "slack":
      return new SlackAdapter({
        botToken: setting(env.SLACK_BOT_TOKEN)!,
        signingSecret: setting(env.SLACK_SIGNING_SECRET)!,
        apiUrl: setting(env.SLACK_API_URL) ?? "https://slack.com/api/",
      });
  }
}
