import { DEFAULT_CONTEXT_TOKENS, DEFAULT_DOH_URL, MIN_CONTEXT_TOKENS, PROVIDERS } from "../agent/index.ts";
import { DEFAULT_TOOL_TIMEOUT_MS, parseMcpServers, parseToolTimeout } from "../agent/mcp/index.ts";
import { DEFAULT_ATTACHMENT_MAX_BYTES } from "../attachments/index.ts";
import type { PlatformName } from "../platforms/names.ts";
import { commaList, hex, httpUrl, milliseconds, oneOf, positiveWhole, text, wholeAtLeast, type Parser } from "./parse.ts";

/** Where a setting belongs: a platform's name, or the part of the Worker it configures. */
export type SettingGroup = "core" | "model" | "tools" | "limits" | "relay" | "attachments" | PlatformName;

/**
 * One setting: whether it is a secret (`wrangler secret put`, `.dev.vars`) or a var
 * (`wrangler.toml [vars]`), what it means, its default (for people; the parser applies it)
 * and its parser. The README's configuration table, `.dev.vars.example` and `[vars]` are
 * checked against these entries (test/node/settings-catalog.test.ts).
 */
export interface SettingSpec<T = unknown, K extends "secret" | "var" = "secret" | "var"> {
  kind: K;
  group: SettingGroup;
  meaning: string;
  default?: string;
  /** Its value may carry keys (a URL with a key in it): problems never repeat it. */
  hideValue?: true;
  parse: Parser<T>;
}

const spec = <T, K extends "secret" | "var">(s: SettingSpec<T, K>): SettingSpec<T, K> => s;

const mcpServers: Parser<string | undefined> = (raw) => {
  const problems = parseMcpServers(raw, { source: "MCP_SERVERS", commands: false }).problems;
  return problems.length === 0 ? { value: raw } : { value: raw, problem: `has problems (the good entries are used): ${problems.join("; ")}` };
};

const toolTimeout: Parser<number> = (raw) => {
  const r = parseToolTimeout(raw);
  return r.problem
    ? { value: r.ms, problem: `is not a whole number of milliseconds up to 600000: ${r.ms} is used; write a number such as 30000` }
    : { value: r.ms };
};

const provider: Parser<string | undefined> = (raw) =>
  raw === undefined || (PROVIDERS as readonly string[]).includes(raw.toLowerCase())
    ? { value: raw }
    : { value: raw, problem: `is not one of ${PROVIDERS.join(", ")}: every turn fails with provider_not_configured; write one of them, or leave it empty` };

/** `*_ALLOWED_USERS` / `*_ADMIN_USERS`: ids or `*`; an entry with a space in it is two ids run together. */
const userList: Parser<string | undefined> = (raw) => {
  const odd = commaList(raw).filter((id) => /\s/.test(id));
  return odd.length === 0
    ? { value: raw }
    : { value: raw, problem: `has an entry with a space in it ('${odd[0]}'), which matches nobody; separate ids with commas` };
};

const relaySecrets: Parser<string | undefined> = (raw) => {
  const bad = commaList(raw).filter((item) => {
    const at = item.indexOf(":");
    return at <= 0 || item.slice(0, at).trim() === "" || item.slice(at + 1).trim() === "";
  }).length;
  return bad === 0
    ? { value: raw }
    : {
        value: raw,
        problem: `has ${bad} entr${bad === 1 ? "y" : "ies"} that ${bad === 1 ? "is" : "are"} not gatewayId:secret and ${bad === 1 ? "is" : "are"} ignored; write gatewayId:secret pairs separated by commas`,
      };
};

/** Meta's Graph API, pinned to a version (Meta keeps each for about two years). */
const WHATSAPP_API_DEFAULT = "https://graph.facebook.com/v23.0";

const budgetOff = "the budget is off (unlimited)";

/**
 * Every setting the Worker reads, one entry each (a name with `<NAME>` stands for a family
 * read by computed name). To add one: an entry here (a parser from ./parse.ts, or a zod
 * schema through `fromSchema`), its row in README's configuration table, the name in
 * wrangler.toml [vars] (a var) or in .dev.vars.example and workers/env.d.ts (a secret), then
 * read it in workers/settings.ts and pass the value in (test/node/settings-catalog.test.ts
 * checks all of these). A new platform's names (SPEC section 9: WHATSAPP_*, MATRIX_*,
 * DISCORD_GATEWAY, BRIDGE_PLATFORMS) join with its adapter, under its own group, so that
 * declaring them never enables anything before the code that reads them exists.
 */
export const CATALOG = {
  API_TOKEN: spec({
    kind: "secret",
    group: "core",
    meaning: "bearer token for /v1/*, the CLI and the console; unset: /v1/* answers 503 not_configured",
    parse: text,
  }),
  SYSTEM_PROMPT: spec({ kind: "var", group: "core", meaning: "the agent's instructions", default: "a built-in default", parse: text }),
  BUSY_POLICY: spec({
    kind: "var",
    group: "core",
    meaning: "queue: a message sent during a turn waits; interrupt: it stops the running turn",
    default: "queue",
    parse: oneOf(["queue", "interrupt"], "queue"),
  }),
  RETENTION_DAYS: spec({
    kind: "var",
    group: "core",
    meaning: "the cron deletes messages and attachments older than this many days",
    default: "kept",
    parse: positiveWhole({ unset: null, fallback: null, whenBad: "nothing is deleted", example: "90" }),
  }),

  LLM_PROVIDER: spec({
    kind: "var",
    group: "model",
    meaning: "openai, workers-ai (the AI binding) or offline",
    default: "openai with LLM_BASE_URL, else offline",
    parse: provider,
  }),
  LLM_BASE_URL: spec({
    kind: "var",
    group: "model",
    meaning: "OpenAI-compatible provider (POST {LLM_BASE_URL}/chat/completions)",
    default: "the offline model",
    hideValue: true,
    parse: httpUrl(undefined, "it is ignored (the offline model answers unless LLM_PROVIDER says otherwise)"),
  }),
  LLM_API_KEY: spec({ kind: "secret", group: "model", meaning: "sent as Authorization: Bearer to the provider", parse: text }),
  LLM_MODEL: spec({
    kind: "var",
    group: "model",
    meaning: "the model name sent to the provider",
    default: "gpt-4o-mini (Workers AI: its default model)",
    parse: text,
  }),
  LLM_CONTEXT_TOKENS: spec({
    kind: "var",
    group: "model",
    meaning: "token budget of one model request; older turns fold into a summary",
    default: String(DEFAULT_CONTEXT_TOKENS),
    parse: wholeAtLeast({ min: MIN_CONTEXT_TOKENS, fallback: DEFAULT_CONTEXT_TOKENS, example: "32000" }),
  }),
  OFFLINE_STREAM_DELAY_MS: spec({
    kind: "var",
    group: "model",
    meaning: "offline model: pause between streamed words",
    default: "15",
    parse: milliseconds("the default 15 is used"),
  }),

  MCP_SERVERS: spec({ kind: "var", group: "tools", meaning: 'remote MCP servers: JSON list [{"name","url"}]', hideValue: true, parse: mcpServers }),
  "MCP_TOKEN_<NAME>": spec({
    kind: "secret",
    group: "tools",
    meaning: "bearer token of the MCP server <name> (upper-cased, other characters as _)",
    parse: text,
  }),
  TOOL_TIMEOUT_MS: spec({ kind: "var", group: "tools", meaning: "limit of one MCP tool call", default: String(DEFAULT_TOOL_TIMEOUT_MS), parse: toolTimeout }),

  FETCH_URL_DOH_URL: spec({
    kind: "var",
    group: "tools",
    meaning: "DNS-over-HTTPS (JSON) endpoint fetch_url resolves host names with; names that do not resolve to public addresses are refused",
    default: DEFAULT_DOH_URL,
    parse: httpUrl(DEFAULT_DOH_URL, `the default ${DEFAULT_DOH_URL} is used`),
  }),

  DAILY_TOKEN_BUDGET: spec({
    kind: "var",
    group: "limits",
    meaning: "tokens per platform user per UTC day",
    default: "unlimited",
    parse: positiveWhole({ unset: null, fallback: null, whenBad: budgetOff, example: "10000" }),
  }),

  TELEGRAM_BOT_TOKEN: spec({ kind: "secret", group: "telegram", meaning: "from @BotFather; with TELEGRAM_WEBHOOK_SECRET, enables Telegram", parse: text }),
  TELEGRAM_WEBHOOK_SECRET: spec({ kind: "secret", group: "telegram", meaning: "the secret_token Telegram echoes on every webhook", parse: text }),
  TELEGRAM_HOME_CHANNEL: spec({ kind: "var", group: "telegram", meaning: "default handoff chat (/sethome overrides it)", parse: text }),
  TELEGRAM_HOME_CHANNEL_THREAD_ID: spec({ kind: "var", group: "telegram", meaning: "the topic of the default handoff chat", parse: text }),
  TELEGRAM_ALLOWED_USERS: spec({ kind: "var", group: "telegram", meaning: "user ids (comma list) or * who may run turns", default: "nobody", parse: userList }),
  TELEGRAM_ADMIN_USERS: spec({
    kind: "var",
    group: "telegram",
    meaning: "allowed users who may also /resume CLI sessions",
    default: "nobody",
    parse: userList,
  }),
  TELEGRAM_API_ROOT: spec({
    kind: "var",
    group: "telegram",
    meaning: "Bot API root",
    default: "https://api.telegram.org",
    parse: httpUrl("https://api.telegram.org", "the default https://api.telegram.org is used"),
  }),

  DISCORD_APPLICATION_ID: spec({ kind: "var", group: "discord", meaning: "the application id", default: "read from the bot token", parse: text }),
  DISCORD_PUBLIC_KEY: spec({
    kind: "var",
    group: "discord",
    meaning: "the application's public key (hex Ed25519); with DISCORD_BOT_TOKEN, enables Discord",
    parse: hex(64, "every Discord request is refused (401); copy the Public Key from the developer portal's General Information page"),
  }),
  DISCORD_BOT_TOKEN: spec({ kind: "secret", group: "discord", meaning: "the bot token (posts into handoff threads; registers commands)", parse: text }),
  DISCORD_HOME_CHANNEL: spec({ kind: "var", group: "discord", meaning: "default handoff channel", parse: text }),
  DISCORD_ALLOWED_USERS: spec({ kind: "var", group: "discord", meaning: "user ids (comma list) or * who may run turns", default: "nobody", parse: userList }),
  DISCORD_ADMIN_USERS: spec({ kind: "var", group: "discord", meaning: "allowed users who may also /resume CLI sessions", default: "nobody", parse: userList }),
  DISCORD_API_BASE: spec({
    kind: "var",
    group: "discord",
    meaning: "REST API base",
    default: "https://discord.com/api/v10",
    parse: httpUrl("https://discord.com/api/v10", "the default https://discord.com/api/v10 is used"),
  }),

  SLACK_BOT_TOKEN: spec({ kind: "secret", group: "slack", meaning: "xoxb-…; with SLACK_SIGNING_SECRET, enables Slack", parse: text }),
  SLACK_SIGNING_SECRET: spec({ kind: "secret", group: "slack", meaning: "verifies the v0 request signatures", parse: text }),
  SLACK_HOME_CHANNEL: spec({ kind: "var", group: "slack", meaning: "default handoff channel id", parse: text }),
  SLACK_ALLOWED_USERS: spec({ kind: "var", group: "slack", meaning: "user ids (comma list) or * who may run turns", default: "nobody", parse: userList }),
  SLACK_ADMIN_USERS: spec({ kind: "var", group: "slack", meaning: "allowed users who may also /resume CLI sessions", default: "nobody", parse: userList }),
  SLACK_API_URL: spec({
    kind: "var",
    group: "slack",
    meaning: "Web API root",
    default: "https://slack.com/api/",
    parse: httpUrl("https://slack.com/api/", "the default https://slack.com/api/ is used"),
  }),

  WHATSAPP_ACCESS_TOKEN: spec({
    kind: "secret",
    group: "whatsapp",
    meaning: "Cloud API access token (a system user's); with WHATSAPP_APP_SECRET, WHATSAPP_VERIFY_TOKEN and WHATSAPP_PHONE_NUMBER_ID, enables WhatsApp",
    parse: text,
  }),
  WHATSAPP_APP_SECRET: spec({
    kind: "secret",
    group: "whatsapp",
    meaning: "the Meta app's secret: verifies X-Hub-Signature-256 on every webhook",
    parse: text,
  }),
  WHATSAPP_VERIFY_TOKEN: spec({
    kind: "secret",
    group: "whatsapp",
    meaning: "any random string, pasted into the app dashboard: answers the subscription handshake",
    parse: text,
  }),
  WHATSAPP_PHONE_NUMBER_ID: spec({ kind: "var", group: "whatsapp", meaning: "the sending number's id (not the number itself)", parse: text }),
  WHATSAPP_BUSINESS_ACCOUNT_ID: spec({
    kind: "var",
    group: "whatsapp",
    meaning: "the WhatsApp Business Account: setup subscribes the app to its webhooks",
    parse: text,
  }),
  WHATSAPP_HOME_CHANNEL: spec({
    kind: "var",
    group: "whatsapp",
    meaning: "default handoff user (a WhatsApp user id, the phone number in digits)",
    parse: text,
  }),
  WHATSAPP_ALLOWED_USERS: spec({
    kind: "var",
    group: "whatsapp",
    meaning: "WhatsApp user ids (comma list) or * who may run turns",
    default: "nobody",
    parse: userList,
  }),
  WHATSAPP_ADMIN_USERS: spec({
    kind: "var",
    group: "whatsapp",
    meaning: "allowed users who may also /resume CLI sessions",
    default: "nobody",
    parse: userList,
  }),
  WHATSAPP_API_BASE: spec({
    kind: "var",
    group: "whatsapp",
    meaning: "Graph API base, with its version",
    default: WHATSAPP_API_DEFAULT,
    parse: httpUrl(WHATSAPP_API_DEFAULT, `the default ${WHATSAPP_API_DEFAULT} is used`),
  }),
  WHATSAPP_HANDOFF_TEMPLATE: spec({
    kind: "var",
    group: "whatsapp",
    meaning: "an approved template (name or name:language) sent for a handoff outside the 24-hour window, the session title as its parameter",
    parse: text,
  }),

  RELAY_PLATFORMS: spec({ kind: "var", group: "relay", meaning: "platforms whose turns run on a relay gateway: platform or platform:gatewayId", parse: text }),
  RELAY_SECRETS: spec({
    kind: "secret",
    group: "relay",
    meaning: "gatewayId:secret pairs accepted on /relay (several per id, for rotation)",
    parse: relaySecrets,
  }),
  RELAY_BUFFER_LIMIT: spec({
    kind: "var",
    group: "relay",
    meaning: "frames kept per gateway while it is away",
    default: "10000",
    parse: positiveWhole({ unset: null, fallback: null, whenBad: "the default 10000 is used", example: "10000" }),
  }),

  ATTACHMENT_MAX_BYTES: spec({
    kind: "var",
    group: "attachments",
    meaning: "largest attachment fetched from a platform",
    default: String(DEFAULT_ATTACHMENT_MAX_BYTES),
    parse: positiveWhole({
      unset: null,
      fallback: null,
      whenBad: `the default ${DEFAULT_ATTACHMENT_MAX_BYTES} is used`,
      example: String(DEFAULT_ATTACHMENT_MAX_BYTES),
    }),
  }),
  LLM_TRANSCRIBE_MODEL: spec({
    kind: "var",
    group: "attachments",
    meaning: "speech-to-text model for voice notes (POST {LLM_BASE_URL}/audio/transcriptions)",
    parse: text,
  }),
};

export type SettingName = keyof typeof CATALOG;

/**
 * How a setting is declared, from its catalog entry: a secret (`wrangler secret put`
 * deployed, `.dev.vars` locally) or a var (`[vars]` in wrangler.toml); `MCP_TOKEN_<NAME>`
 * names are the family's. A name the catalog lacks is a var.
 */
export function settingKind(name: string): "secret" | "var" {
  const entry = name.startsWith("MCP_TOKEN_") ? CATALOG["MCP_TOKEN_<NAME>"] : (CATALOG as Record<string, SettingSpec | undefined>)[name];
  return entry?.kind ?? "var";
}

/**
 * The names the catalog declares as secrets: workers/env.d.ts types them on `Env` (knip does not
 * see that type import, hence @public).
 * @public
 */
export type SecretName = {
  [K in SettingName]: (typeof CATALOG)[K]["kind"] extends "secret" ? (K extends `${string}<${string}` ? never : K) : never;
}[SettingName];

/** The values of every (non-family) setting, as their parsers made them. */
export type CatalogValues = { [K in SettingName]: (typeof CATALOG)[K] extends SettingSpec<infer T> ? T : never };

/**
 * A setting whose value was not understood: which one, its value (never a secret's, nor
 * one marked `hideValue`), and a sentence saying what is wrong, what the Worker does
 * instead and what to write.
 */
export interface SettingProblem {
  setting: string;
  value: string | null;
  message: string;
}

/** A problem from a setting's raw value, worded so that a secret is never repeated. */
export function settingProblem(name: string, raw: string, problem: string): SettingProblem {
  const entry = (CATALOG as Record<string, SettingSpec>)[name];
  const shown = entry?.kind === "secret" || entry?.hideValue ? null : raw;
  return { setting: name, value: shown, message: shown === null ? `${name} (value not shown) ${problem}` : `${name}=${shown} ${problem}` };
}

/** Every setting of the catalog read from `env` (trimmed; empty means unset): the values, and the problems. */
export function readCatalog(env: Readonly<Record<string, unknown>>): { values: CatalogValues; problems: SettingProblem[] } {
  const values: Record<string, unknown> = {};
  const problems: SettingProblem[] = [];
  for (const [name, entry] of Object.entries(CATALOG) as Array<[string, SettingSpec]>) {
    if (name.includes("<")) continue;
    const v = env[name];
    const raw = typeof v === "string" && v.trim() !== "" ? v.trim() : undefined;
    const r = entry.parse(raw);
    values[name] = r.value;
    if (r.problem && raw !== undefined) problems.push(settingProblem(name, raw, r.problem));
  }
  return { values: values as CatalogValues, problems };
}
