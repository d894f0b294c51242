import { settings } from "../settings.ts";
import type { ConnectionPorts, PlatformConnection } from "./connection.ts";
import { DiscordGatewayConnection } from "./discord/gateway/connection.ts";
import { DiscordAdapter } from "./discord/index.ts";
import { isPlatformName, type PlatformName } from "./names.ts";
import { SlackAdapter } from "./slack/index.ts";
import { TelegramAdapter } from "./telegram/index.ts";
import { WhatsAppAdapter } from "./whatsapp/index.ts";
import type { PlatformAdapter } from "./types.ts";

const adapters = new WeakMap<object, Map<PlatformName, PlatformAdapter>>();

/** Builds an enabled platform's adapter from its catalog settings (enabled: its pair is set). */
function build(env: Env, name: PlatformName): PlatformAdapter {
  const a = settings(env).adapters;
  switch (name) {
    case "telegram":
      return new TelegramAdapter({ token: a.telegram.token ?? "", webhookSecret: a.telegram.webhookSecret ?? "", apiRoot: a.telegram.apiRoot });
    case "discord":
      return new DiscordAdapter({
        applicationId: a.discord.applicationId ?? "",
        publicKey: a.discord.publicKey ?? "",
        botToken: a.discord.botToken,
        apiBase: a.discord.apiBase,
        gateway: a.discord.gateway,
      });
    case "slack":
      return new SlackAdapter({ botToken: a.slack.botToken ?? "", signingSecret: a.slack.signingSecret ?? "", apiUrl: a.slack.apiUrl });
    case "whatsapp": {
      const w = a.whatsapp;
      return new WhatsAppAdapter({
        accessToken: w.accessToken ?? "",
        appSecret: w.appSecret ?? "",
        verifyToken: w.verifyToken ?? "",
        phoneNumberId: w.phoneNumberId ?? "",
        apiBase: w.apiBase,
        handoffTemplate: w.handoffTemplate ?? null,
      });
    }
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

/**
 * Discord's Gateway connection over a host's ports, when `DISCORD_GATEWAY=on` and Discord
 * is enabled (its bot token opens the socket); else null. Built by the object that holds it.
 */
export function gatewayConnection(env: Env, ports: ConnectionPorts): PlatformConnection | null {
  const d = settings(env).adapters.discord;
  if (connectedPlatform(env) === null || !d.botToken) return null;
  return new DiscordGatewayConnection({ botToken: d.botToken, apiBase: d.apiBase }, ports);
}

/** The platform whose messages come over a connection the Worker holds (Discord with DISCORD_GATEWAY=on), or null. */
export function connectedPlatform(env: Env): PlatformName | null {
  const s = settings(env);
  return s.adapters.discord.gateway && s.platforms.discord.enabled ? "discord" : null;
}
