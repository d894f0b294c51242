// Secrets are optional (unset means the feature is off), so `wrangler types`, which only
// sees [vars] and bindings, cannot know them. Their names come from the settings catalog
// (each entry of kind "secret"), so a new secret is declared once, there.
type HermesSecretValues = { [K in import("./settings/catalog.ts").SecretName]?: string };
interface HermesSecrets extends HermesSecretValues {
  /** The Workers AI binding, present only when wrangler.toml has `[ai] binding = "AI"`. */
  AI?: Ai;
}
interface Env extends HermesSecrets {}
declare namespace Cloudflare {
  interface Env extends HermesSecrets {}
}
