/** Platforms the gateway knows. (No runtime imports: shared with the Node relay gateway.) */
export const PLATFORMS = ["telegram", "discord", "slack"] as const;
export type PlatformName = (typeof PLATFORMS)[number];

export function isPlatformName(v: string): v is PlatformName {
  return (PLATFORMS as readonly string[]).includes(v);
}

/** How a platform's name is written for people. */
export const PLATFORM_LABEL: Record<PlatformName, string> = { telegram: "Telegram", discord: "Discord", slack: "Slack" };

/** The setting that lists a platform's allowed users (`TELEGRAM_ALLOWED_USERS`, …). */
export function allowedUsersSetting(platform: PlatformName): string {
  return `${platform.toUpperCase()}_ALLOWED_USERS`;
}

/** The setting that lists a platform's admins (`TELEGRAM_ADMIN_USERS`, …). */
export function adminUsersSetting(platform: PlatformName): string {
  return `${platform.toUpperCase()}_ADMIN_USERS`;
}
