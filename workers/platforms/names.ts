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

/**
 * The settings kept as secrets (`wrangler secret put NAME` deployed, `.dev.vars` locally);
 * every other setting is a var (`[vars]` in wrangler.toml). The names `HermesSecrets`
 * declares in env.d.ts (a test compares them), plus the `MCP_TOKEN_<NAME>` family.
 */
export const SECRET_SETTINGS: readonly string[] = ["API_TOKEN", "LLM_API_KEY", "TELEGRAM_BOT_TOKEN", "TELEGRAM_WEBHOOK_SECRET", "DISCORD_BOT_TOKEN", "SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET", "RELAY_SECRETS"];

/** How a setting is declared: a secret or a `[vars]` entry. */
export function settingKind(name: string): "secret" | "var" {
  return SECRET_SETTINGS.includes(name) || name.startsWith("MCP_TOKEN_") ? "secret" : "var";
}

/** The setting that lists a platform's admins (`TELEGRAM_ADMIN_USERS`, …). */
export function adminUsersSetting(platform: PlatformName): string {
  return `${platform.toUpperCase()}_ADMIN_USERS`;
}
