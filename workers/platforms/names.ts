import { discordInfo } from "./discord/info.ts";
import type { PlatformInfo } from "./info.ts";
import { matrixInfo } from "./matrix/info.ts";
import { slackInfo } from "./slack/info.ts";
import { telegramInfo } from "./telegram/info.ts";
import { whatsappInfo } from "./whatsapp/info.ts";

/**
 * The platforms the gateway knows: the one list a new platform joins (its `info.ts`; its
 * adapter joins `all.ts`). Pure data, no adapter code: shared with the CLI, the Node relay
 * gateway and the console.
 */
const INFOS = [telegramInfo, discordInfo, slackInfo, whatsappInfo, matrixInfo] as const;

export type PlatformName = (typeof INFOS)[number]["name"];
export const PLATFORMS: readonly PlatformName[] = INFOS.map((i) => i.name);

export function isPlatformName(v: string): v is PlatformName {
  return (PLATFORMS as readonly string[]).includes(v);
}

/** What the code knows about each platform without its adapter (labels, settings, links). */
export const PLATFORM_INFO = Object.fromEntries(INFOS.map((i): [string, PlatformInfo<PlatformName>] => [i.name, i])) as Record<
  PlatformName,
  PlatformInfo<PlatformName>
>;

/** How a platform's name is written for people. */
export const PLATFORM_LABEL = Object.fromEntries(INFOS.map((i) => [i.name, i.label])) as Record<PlatformName, string>;

/** The setting that lists a platform's allowed users (`TELEGRAM_ALLOWED_USERS`, …). */
export function allowedUsersSetting(platform: PlatformName): string {
  return `${platform.toUpperCase()}_ALLOWED_USERS`;
}

/**
 * Where a session starts when it is not on a platform: `cli` (made over the API with the
 * bearer token: the CLI, scripts) or `console` (made in the web console, signed in by its
 * cookie). Both are the operator's, and are treated alike (`/resume` by `*_ADMIN_USERS`,
 * handoff).
 */
export const OPERATOR_SOURCES = ["cli", "console"] as const;
export type OperatorSource = (typeof OPERATOR_SOURCES)[number];

export function isOperatorSource(source: string): source is OperatorSource {
  return (OPERATOR_SOURCES as readonly string[]).includes(source);
}

/** The setting that lists a platform's admins (`TELEGRAM_ADMIN_USERS`, …). */
export function adminUsersSetting(platform: PlatformName): string {
  return `${platform.toUpperCase()}_ADMIN_USERS`;
}

/** The setting naming a platform's default home channel (`TELEGRAM_HOME_CHANNEL`, …). */
export function homeChannelSetting(platform: PlatformName): string {
  return `${platform.toUpperCase()}_HOME_CHANNEL`;
}

/** A home channel as the API shows it (`GET /v1/platforms`). */
export interface HomeChannelInfo {
  chat_id: string;
  thread_id: string | null;
  /** `sethome`: set in a chat; `env`: the `*_HOME_CHANNEL` default. */
  source: string;
  /** Who sent /sethome (null: from env). */
  set_by?: string | null;
  /** When /sethome was sent (epoch ms; null: from env). */
  set_at?: number | null;
}

/**
 * Where a handoff will go, for people to check before it is queued (CLI, console, API):
 * "telegram chat -100123, thread: new topic; home set by /sethome from user 111 on 2026-12-01".
 */
export function describeHandoffDestination(platform: PlatformName, home: HomeChannelInfo, opts: { thread: boolean; explicit?: boolean }): string {
  const thread = opts.thread ? `new ${PLATFORM_INFO[platform].threadWord}` : home.thread_id ? home.thread_id : "none (the chat itself)";
  const where = `${platform} chat ${home.chat_id}, thread: ${thread}`;
  if (opts.explicit) return `${where}; chat named in the request`;
  if (home.source !== "sethome") return `${where}; home set by ${homeChannelSetting(platform)}`;
  const day = typeof home.set_at === "number" ? new Date(home.set_at).toISOString().slice(0, 10) : "an unknown day";
  return `${where}; home set by /sethome from user ${home.set_by ?? "unknown"} on ${day}`;
}
