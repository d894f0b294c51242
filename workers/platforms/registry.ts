import { settings } from "../settings.ts";
import { DiscordAdapter } from "./discord/index.ts";
import { isPlatformName, type PlatformName } from "./names.ts";
import { SignalAdapter, type SignalBridge } from "./signal/index.ts";
import { SlackAdapter } from "./slack/index.ts";
import { TelegramAdapter } from "./telegram/index.ts";
import { WhatsAppAdapter } from "./whatsapp/index.ts";
import type { PlatformAdapter } from "./types.ts";

/**
 * Signal's outbound path: the Relay object of the gateway that bridges it (actions stored
 * there until the gateway confirms them), and R2 for the files the gateway uploaded.
 */
function signalBridge(env: Env, gatewayId: string): SignalBridge {
  const relay = () => env.RELAY.getByName(gatewayId);
  return {
    enqueue: async (actions) => {
      await relay().enqueueBridged("signal", actions);
    },
    state: () => relay().bridgeState("signal"),
    uuidOf: (number) => relay().bridgedUuidOf(number),
    file: async (key, maxBytes) => {
      if (!key.startsWith(`relay/${gatewayId}/`)) return { ok: false, reason: "failed", detail: "not a file this gateway uploaded" };
      const obj = await env.FILES.get(key);
      if (!obj) return { ok: false, reason: "failed", detail: "the uploaded file is gone" };
      if (obj.size > maxBytes) return { ok: false, reason: "too_large", detail: `${obj.size} bytes, over ${maxBytes}` };
      return { ok: true, bytes: new Uint8Array(await obj.arrayBuffer()), mime: obj.httpMetadata?.contentType ?? null };
    },
  };
}

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
    case "signal":
      return new SignalAdapter({ bridge: signalBridge(env, settings(env).platforms.signal.bridge ?? "") });
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
