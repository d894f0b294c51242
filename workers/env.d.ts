// Secrets are optional (unset means the feature is off), so `wrangler types`, which only
// sees [vars] and bindings, cannot know them. They are declared here, once.
interface HermesSecrets {
  API_TOKEN?: string;
  LLM_API_KEY?: string;
  TELEGRAM_BOT_TOKEN?: string;
  TELEGRAM_WEBHOOK_SECRET?: string;
  DISCORD_BOT_TOKEN?: string;
  SLACK_BOT_TOKEN?: string;
  SLACK_SIGNING_SECRET?: string;
  WHATSAPP_ACCESS_TOKEN?: string;
  WHATSAPP_APP_SECRET?: string;
  WHATSAPP_VERIFY_TOKEN?: string;
  MATRIX_AS_TOKEN?: string;
  MATRIX_HS_TOKEN?: string;
  RELAY_SECRETS?: string;
  /** The Workers AI binding, present only when wrangler.toml has `[ai] binding = "AI"`. */
  AI?: Ai;
}
interface Env extends HermesSecrets {}
declare namespace Cloudflare {
  interface Env extends HermesSecrets {}
}
