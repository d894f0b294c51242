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
  RELAY_SECRETS?: string;
  /** Not a secret, but optional and absent from [vars]: fetch_url's DNS-over-HTTPS endpoint (default Cloudflare's). */
  FETCH_URL_DOH_URL?: string;
  /** The Workers AI binding, present only when wrangler.toml has `[ai] binding = "AI"`. */
  AI?: Ai;
}
interface Env extends HermesSecrets {}
declare namespace Cloudflare {
  interface Env extends HermesSecrets {}
}
