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
